//! The fst-blog table from Rust: write, whole read (as row-group batches and column by column)
//! and a 1000-row read of two columns, timed.
//!
//! ```sh
//! cargo run --release -p kompakt-table --example fst -- [rows] [threads]
//! ```
//! (10M rows by default: bool with 5 % nulls, int32 1..100, float64 from 20 prices, a
//! dictionary of 70 cities.) The issue's target for the 1000-row read is 50 us.

use arrow_array::types::Int8Type;
use arrow_array::*;
use kompakt_table::{write_table_file, TableOptions, TableReader, TableWriter};
use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(Ok(10_000_000), |s| s.parse())?;
    let threads: usize = args.get(2).map_or(Ok(0), |s| s.parse())?;
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let prices: Vec<f64> = (0..20).map(|i| (i as f64 * 4.37 + 1.0).round() / 1.0 + 0.99).collect();
    let cities: Vec<String> = (0..70).map(|i| format!("city{i}")).collect();
    let logical = BooleanArray::from_iter((0..n).map(|_| {
        let r = next();
        (r % 100 >= 5).then_some(r & 1 == 1)
    }));
    let integer = Int32Array::from_iter_values((0..n).map(|_| 1 + (next() % 100) as i32));
    let real = Float64Array::from_iter_values((0..n).map(|_| prices[(next() % 20) as usize]));
    let keys = Int8Array::from_iter_values((0..n).map(|_| (next() % 70) as i8));
    let factor = DictionaryArray::<Int8Type>::try_new(keys, Arc::new(StringArray::from_iter_values(&cities)))?;
    let batch = RecordBatch::try_from_iter([
        ("Logical", Arc::new(logical) as ArrayRef),
        ("Integer", Arc::new(integer) as ArrayRef),
        ("Real", Arc::new(real) as ArrayRef),
        ("Factor", Arc::new(factor) as ArrayRef),
    ])?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("fst.kpk");
    let opts = TableOptions {
        threads,
        ..Default::default()
    };
    let best = |f: &mut dyn FnMut() -> Result<(), Box<dyn std::error::Error>>, reps: usize| {
        let mut best = f64::MAX;
        for _ in 0..reps {
            let t = Instant::now();
            f().expect("run");
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    let write = best(
        &mut || {
            write_table_file(&path, batch.schema(), [Ok(batch.clone())], opts.clone())?;
            Ok(())
        },
        3,
    );
    // The same into memory: the encoding and compression alone, no file system.
    let write_memory = best(
        &mut || {
            let mut w = TableWriter::new(Vec::with_capacity(32 << 20), batch.schema(), opts.clone())?;
            w.write(&batch)?;
            w.finish()?;
            Ok(())
        },
        3,
    );
    let size = std::fs::metadata(&path)?.len();
    let table = TableReader::open(&path)?;
    let read = best(
        &mut || {
            table.read(None, 0..n as u64, threads)?;
            Ok(())
        },
        5,
    );
    // One buffer per column: with the system allocator each read maps (and faults in) fresh
    // memory, where the per-group buffers of `read` are reused from the heap.
    let read_columns = best(
        &mut || {
            table.read_columns(None, 0..n as u64, threads)?;
            Ok(())
        },
        5,
    );
    let mid = n as u64 / 2;
    let slice = best(
        &mut || {
            TableReader::open(&path)?.read(Some(&[1, 2]), mid..mid + 1000, threads)?;
            Ok(())
        },
        200,
    );
    let slice_open = best(
        &mut || {
            table.read(Some(&[1, 2]), mid..mid + 1000, threads)?;
            Ok(())
        },
        200,
    );
    println!(
        "{n} rows: write {:.1} ms ({:.1} ms into memory), file {:.2} MB, read {:.1} ms (batches) / {:.1} ms (columns), \
         1000 rows x 2 columns {:.0} us (open file: {:.0} us)",
        write * 1e3,
        write_memory * 1e3,
        size as f64 / 1e6,
        read * 1e3,
        read_columns * 1e3,
        slice * 1e6,
        slice_open * 1e6
    );
    Ok(())
}
