"""The Python part of the demo: save and load a DataFrame and arrays, next to pickle."""

import os
import pickle
import shutil
import sys
import time

import numpy as np
import pandas as pd

import kompakt

out = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
rng = np.random.default_rng(42)
cities = np.array([f"city-{i:02d}" for i in range(70)])
df = pd.DataFrame(
    {
        "flag": pd.array(np.where(rng.random(rows) < 0.1, None, rng.random(rows) < 0.5), dtype="boolean"),
        "qty": rng.integers(1, 101, rows),
        "price": rng.choice(np.round(rng.uniform(1, 500, 20), 2), rows),
        "city": pd.Categorical(rng.choice(cities, rows)),
    }
)
obj = {"table": df, "signal": np.cumsum(rng.integers(0, 5, rows)), "note": "kompakt demo"}
nbytes = int(df.memory_usage(deep=True).sum()) + obj["signal"].nbytes
print(f"object: {rows:,} rows + a sorted int64 array, {nbytes / 1e6:.1f} MB in memory")


def timed(label, fn):
    t = time.perf_counter()
    result = fn()
    print(f"  {label:<28} {time.perf_counter() - t:6.3f} s")
    return result


path = os.path.join(out, "object.kpk")
timed("kompakt.save", lambda: kompakt.save(obj, path))
back = timed("kompakt.load", lambda: kompakt.load(path))
pd.testing.assert_frame_equal(back["table"], df)
assert (back["signal"] == obj["signal"]).all() and back["signal"].flags.writeable
pkl = os.path.join(out, "object.pkl")


def pickle_save():
    with open(pkl, "wb") as f:
        pickle.dump(obj, f, protocol=5)


def pickle_load():
    with open(pkl, "rb") as f:
        return pickle.load(f)


timed("pickle.dump (uncompressed)", pickle_save)
timed("pickle.load", pickle_load)
print(f"  sizes: kompakt {os.path.getsize(path) / 1e6:.1f} MB, pickle {os.path.getsize(pkl) / 1e6:.1f} MB")
info = kompakt.info(path)
print(
    f"  kompakt.info: {len(info['streams'])} streams, ratio {info['ratio']:.2f}, "
    f"{len(info['object']['buffers'])} buffers stored out of band"
)
assert kompakt.load(path, trusted=False)["note"] == "kompakt demo"
print("  loaded again with trusted=False (restricted unpickler): ok")

print("\n== kompakt.Store: a content-addressed cache")
store_path = os.path.join(out, "store")
shutil.rmtree(store_path, ignore_errors=True)
store = kompakt.Store(store_path)
timed("store.set (DataFrame)", lambda: store.set("table", df))
timed("store.get (DataFrame)", lambda: store.get("table"))
n = 2000
t = time.perf_counter()
for i in range(n):
    store[f"score-{i}"] = i * 0.5
t_set = (time.perf_counter() - t) / n
t = time.perf_counter()
for i in range(n):
    assert store[f"score-{i}"] == i * 0.5
t_get = (time.perf_counter() - t) / n
print(f"  {n} tiny values: set {t_set * 1e6:.0f} us, get {t_get * 1e6:.0f} us each")
calls = []


@store.memoize
def column_means(frame):
    calls.append(1)
    return frame.select_dtypes("number").mean()


column_means(df)
column_means(df.copy())  # same content: served from the store
assert len(calls) == 1
print("  memoize: second call with an equal DataFrame served from the store")
store.set("table copy", df)
info = store.info()
print(
    f"  {info['keys']} keys, {info['objects']} objects (equal values stored once), "
    f"{info['stored_bytes'] / 1e6:.1f} MB stored"
)
assert store.verify()["problems"] == []

print("\n== Tables: columns and row ranges read on their own")
table_path = os.path.join(out, "table.kpk")
timed("write_table", lambda: kompakt.write_table(df, table_path))
back = timed("read_table (all)", lambda: kompakt.read_table(table_path))
assert back.equals(df)
mid = rows // 2
part = timed(
    "1000 rows of 2 columns", lambda: kompakt.read_table(table_path, ["price", "city"], rows=(mid, mid + 1000))
)
assert part.equals(df.iloc[mid : mid + 1000][["price", "city"]])
kompakt.append_table(df.iloc[:1000], table_path)
assert kompakt.TableFile(table_path).num_rows == rows + 1000
parquet_note = ""
try:
    import pyarrow.parquet as pq

    pq_path = os.path.join(out, "table.parquet")
    pq.write_table(kompakt.read_table(table_path, to="arrow").slice(0, rows), pq_path, compression="zstd")
    parquet_note = f", Parquet-zstd {os.path.getsize(pq_path) / 1e6:.1f} MB"
except ImportError:
    pass
print(f"  table file {os.path.getsize(table_path) / 1e6:.1f} MB after an append of 1000 rows{parquet_note}")
for c in kompakt.TableFile(table_path).summary():
    print(f"    {c['name']:<6} {c['type']:<28} pages {c['encodings']}  {c['stored_bytes'] / 1e6:.2f} MB")
