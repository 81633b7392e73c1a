//! The `kompakt` binary, run as a user would, in a temporary folder.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("kompakt-cli-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    fn names(&self) -> Vec<String> {
        let mut v: Vec<_> = fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn kompakt(args: &[&str], cwd: &Path, stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kompakt"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.unwrap_or_default().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn ok(out: &Output) -> &Output {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn sample() -> Vec<u8> {
    (0..300_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect()
}

#[test]
fn compress_decompress_cat_inspect_verify() {
    let d = Dir::new("main");
    let data = sample();
    fs::write(d.path("data.bin"), &data).unwrap();
    ok(&kompakt(
        &["compress", "data.bin", "--typesize", "4", "-b", "256K"],
        &d.0,
        None,
    ));
    assert!(d.path("data.bin.kpk").exists());
    let again = kompakt(&["compress", "data.bin", "-q"], &d.0, None);
    assert_eq!(again.status.code(), Some(2), "refuses to overwrite");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    ok(&kompakt(
        &["compress", "data.bin", "-f", "-q", "--level", "30", "-T", "2"],
        &d.0,
        None,
    ));

    let out = kompakt(&["decompress", "data.bin.kpk", "-o", "copy.bin"], &d.0, None);
    ok(&out);
    assert!(fs::read(d.path("copy.bin")).unwrap() == data);
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(
        summary.starts_with("data.bin.kpk: ") && summary.contains(" MB/s"),
        "{summary}"
    );

    let cat = ok(&kompakt(&["cat", "data.bin.kpk", "--range", "1000:1016"], &d.0, None))
        .stdout
        .clone();
    assert_eq!(cat, &data[1000..1016]);
    let cat = ok(&kompakt(&["cat", "data.bin.kpk", "-r", "1M:"], &d.0, None))
        .stdout
        .clone();
    assert!(cat == data[1 << 20..]);
    let bad_range = kompakt(&["cat", "data.bin.kpk", "-r", "5:2"], &d.0, None);
    assert_eq!(bad_range.status.code(), Some(2));

    let info = ok(&kompakt(&["inspect", "data.bin.kpk", "--json", "--blocks"], &d.0, None))
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&info).unwrap();
    assert_eq!(v["streams"][0]["raw_size"], data.len());
    assert!(!v["blocks"].as_array().unwrap().is_empty());
    let text = ok(&kompakt(&["inspect", "data.bin.kpk"], &d.0, None)).stdout.clone();
    assert!(String::from_utf8_lossy(&text).contains("ratio"));

    let good = ok(&kompakt(&["verify", "data.bin.kpk"], &d.0, None)).stdout.clone();
    assert!(String::from_utf8_lossy(&good).contains("OK"));
}

/// A regular file is read by the compressing threads themselves (2 threads and more), a pipe
/// in order by a reader thread: the files they make must not differ.
#[test]
fn sync_writes_the_same_file_and_bad_values_name_the_valid_ones() {
    let d = Dir::new("sync");
    let data = sample();
    fs::write(d.path("data.bin"), &data).unwrap();
    ok(&kompakt(&["compress", "data.bin", "-q", "-o", "none.kpk"], &d.0, None));
    ok(&kompakt(
        &["compress", "data.bin", "-q", "--sync", "always", "-o", "always.kpk"],
        &d.0,
        None,
    ));
    ok(&kompakt(
        &["--sync", "none", "decompress", "always.kpk", "-q", "-o", "back.bin"],
        &d.0,
        None,
    ));
    assert_eq!(
        fs::read(d.path("none.kpk")).unwrap(),
        fs::read(d.path("always.kpk")).unwrap()
    );
    assert_eq!(fs::read(d.path("back.bin")).unwrap(), data);
    let bad = kompakt(
        &["compress", "data.bin", "-q", "--sync", "batched", "-o", "x.kpk"],
        &d.0,
        None,
    );
    assert_eq!(bad.status.code(), Some(2));
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(said.contains("\"always\" (fsync each file) or \"none\""), "{said}");
    assert!(!d.path("x.kpk").exists());
    let env_bad = Command::new(env!("CARGO_BIN_EXE_kompakt"))
        .args(["compress", "data.bin", "-q", "-o", "y.kpk"])
        .current_dir(&d.0)
        .env("KOMPAKT_SYNC", "sometimes")
        .output()
        .unwrap();
    assert_eq!(env_bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&env_bad.stderr).contains("KOMPAKT_SYNC"));
}

#[test]
fn a_file_compresses_to_the_bytes_a_pipe_does() {
    let d = Dir::new("file-vs-pipe");
    let mut x = 7u64;
    // Compressible runs and incompressible noise, several 512 KiB batches and a ragged end.
    let data: Vec<u8> = (0..3_000_017u64)
        .map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if (i / 100_000) % 3 == 0 {
                (x >> 56) as u8
            } else {
                (i / 300) as u8
            }
        })
        .collect();
    fs::write(d.path("mixed.bin"), &data).unwrap();
    let piped = ok(&kompakt(
        &["compress", "-", "-q", "-b", "64K", "-T", "2"],
        &d.0,
        Some(&data),
    ))
    .stdout
    .clone();
    for threads in ["1", "2", "3"] {
        let out = format!("t{threads}.kpk");
        ok(&kompakt(
            &["compress", "mixed.bin", "-q", "-b", "64K", "-T", threads, "-o", &out],
            &d.0,
            None,
        ));
        assert!(fs::read(d.path(&out)).unwrap() == piped, "{threads} threads");
    }
    let back = ok(&kompakt(&["decompress", "t2.kpk", "-o", "-"], &d.0, None))
        .stdout
        .clone();
    assert!(back == data);
}

#[test]
fn pipes_work_both_ways() {
    let d = Dir::new("pipe");
    let data = sample();
    let packed = ok(&kompakt(&["compress", "-", "-q"], &d.0, Some(&data))).stdout.clone();
    assert!(packed.len() < data.len());
    let back = ok(&kompakt(&["decompress", "-"], &d.0, Some(&packed))).stdout.clone();
    assert!(back == data);
    let verified = ok(&kompakt(&["verify", "-"], &d.0, Some(&packed))).stdout.clone();
    assert!(String::from_utf8_lossy(&verified).contains("OK"));
    // Same bytes whatever the thread count.
    let one = ok(&kompakt(&["compress", "-", "-q", "-T", "1"], &d.0, Some(&data)))
        .stdout
        .clone();
    assert!(one == packed);
}

#[test]
fn damaged_files_fail_cleanly_and_leave_no_output() {
    let d = Dir::new("damaged");
    let data = sample();
    fs::write(d.path("data.bin"), &data).unwrap();
    ok(&kompakt(&["compress", "data.bin", "-q"], &d.0, None));
    let mut bytes = fs::read(d.path("data.bin.kpk")).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    fs::write(d.path("bad.kpk"), &bytes).unwrap();

    let v = kompakt(&["verify", "bad.kpk"], &d.0, None);
    assert_eq!(v.status.code(), Some(1), "damaged file: exit 1");
    assert!(String::from_utf8_lossy(&v.stdout).contains("DAMAGED"));
    let missing = kompakt(&["verify", "nope.kpk"], &d.0, None);
    assert_eq!(missing.status.code(), Some(2));

    fs::write(d.path("keep.bin"), b"previous good content").unwrap();
    let out = kompakt(&["decompress", "bad.kpk", "-o", "keep.bin", "-f"], &d.0, None);
    assert_eq!(out.status.code(), Some(1), "damaged data: exit 1");
    assert!(String::from_utf8_lossy(&out.stderr).contains("checksum"));
    assert_eq!(fs::read(d.path("keep.bin")).unwrap(), b"previous good content");
    let piped = kompakt(&["decompress", "-"], &d.0, Some(&bytes));
    assert_eq!(piped.status.code(), Some(1));
    // One unreadable file does not stop the others from being checked.
    let v = kompakt(&["verify", "nope.kpk", "data.bin.kpk"], &d.0, None);
    assert_eq!(v.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&v.stdout).contains("data.bin.kpk: OK"));
    assert_eq!(
        d.names(),
        ["bad.kpk", "data.bin", "data.bin.kpk", "keep.bin"],
        "no temporary or partial files are left"
    );
}

#[test]
fn a_bare_codec_with_a_level_is_that_codecs_level() {
    let d = Dir::new("codec-level");
    fs::write(d.path("data.bin"), sample()).unwrap();
    for (args, out) in [
        (vec!["--codec", "zstd", "--level", "9"], "a.kpk"),
        (vec!["--codec", "zstd:9"], "b.kpk"),
        (vec!["--codec", "zstd", "--level", "-3"], "c.kpk"),
        (vec!["--codec", "zstd:-3"], "d.kpk"),
    ] {
        let mut all = vec!["compress", "data.bin", "-q", "-o", out];
        all.extend(args);
        ok(&kompakt(&all, &d.0, None));
    }
    assert!(fs::read(d.path("a.kpk")).unwrap() == fs::read(d.path("b.kpk")).unwrap());
    assert!(fs::read(d.path("c.kpk")).unwrap() == fs::read(d.path("d.kpk")).unwrap());
    assert!(fs::read(d.path("a.kpk")).unwrap() != fs::read(d.path("c.kpk")).unwrap());
}

#[test]
fn bad_options_name_the_valid_choices() {
    let d = Dir::new("options");
    fs::write(d.path("x.bin"), b"x").unwrap();
    for (args, needle) in [
        (vec!["compress", "x.bin", "--codec", "zsdt"], "lz4hc"),
        (vec!["compress", "x.bin", "--codec", "zstd:40"], "-50..=22"),
        (vec!["compress", "x.bin", "--level", "101"], "0-100"),
        (vec!["compress", "x.bin", "--block-size", "1K"], "64 KiB"),
        (vec!["compress", "x.bin", "--block-size", "lots"], "64K"),
        (vec!["compress", "x.bin", "--filter", "xor"], "shuffle"),
        (vec!["decompress", "x.bin"], "-o"),
        (vec!["compress", "missing.bin"], "cannot open"),
        (vec!["compress", "x.bin", "--typesize", "0"], "1-255 bytes"),
        (vec!["compress", "x.bin", "--level", "300"], "0-100"),
        (
            vec!["compress", "x.bin", "--codec", "zstd:3", "--level", "9"],
            "already sets a level",
        ),
        (
            vec!["compress", "x.bin", "--codec", "auto", "--level", "9"],
            "takes no level",
        ),
        (vec!["bench", "x.bin", "--seconds", "nan"], "0 to 3600"),
    ] {
        let out = kompakt(&args, &d.0, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert_eq!(d.names(), ["x.bin"]);
}

#[test]
fn bench_reports_every_codec_as_json() {
    let d = Dir::new("bench");
    fs::write(d.path("data.bin"), sample()).unwrap();
    let out = ok(&kompakt(
        &[
            "bench",
            "data.bin",
            "--codecs",
            "lz4,zstd:1,auto,30",
            "-T",
            "1,2",
            "--seconds",
            "0",
            "--json",
            "-q",
        ],
        &d.0,
        None,
    ))
    .stdout
    .clone();
    let rows: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1 + 4 * 2, "memcpy + 4 codecs x 2 thread counts");
    for r in rows {
        assert!(r["ratio"].as_f64().unwrap() >= 1.0);
        assert!(r["compress_mb_s"].as_f64().unwrap() > 0.0);
        assert!(
            r["decompress_unverified_mb_s"].is_null(),
            "measured only when asked: {r}"
        );
    }
}

#[test]
fn bench_sweeps_level_ranges_filters_and_block_sizes_in_squash_shaped_rows() {
    let d = Dir::new("bench-sweep");
    fs::write(d.path("data.bin"), sample()).unwrap();
    let args = [
        "bench",
        "data.bin",
        "--codecs",
        "zstd:1-3,lz4hc:1-9:4",
        "--filter",
        "shuffle,none",
        "-b",
        "64K,1M",
        "-T",
        "1",
        "--seconds",
        "0",
        "-q",
    ];
    let out = ok(&kompakt(&[&args[..], &["--json"]].concat(), &d.0, None))
        .stdout
        .clone();
    let rows: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(
        rows.len(),
        1 + 6 * 2 * 2,
        "memcpy + 6 codecs x 2 filters x 2 block sizes"
    );
    let mut seen = std::collections::BTreeSet::new();
    for r in &rows[1..] {
        let name = r["codec_name"].as_str().unwrap();
        let level = r["level"].as_i64().unwrap();
        assert_eq!(r["codec"].as_str().unwrap(), format!("{name}:{level}"));
        assert_eq!(r["dataset"], "data.bin");
        assert_eq!(r["plugin"], "kompakt");
        assert_eq!(r["uncompressed_size"], r["raw_size"]);
        for k in ["compress_cpu", "compress_wall", "decompress_cpu", "decompress_wall"] {
            assert!(r[k].as_f64().unwrap() >= 0.0, "{k}: {r}");
        }
        assert!(r["compress_wall"].as_f64().unwrap() > 0.0);
        seen.insert((
            r["codec"].as_str().unwrap().to_string(),
            r["filter"].as_str().unwrap().to_string(),
            r["block_size"].as_u64().unwrap(),
        ));
    }
    assert_eq!(seen.len(), 24, "every combination once: {seen:?}");
    assert!(seen.contains(&("lz4hc:9".into(), "none".into(), 65536)));
    let table = String::from_utf8(ok(&kompakt(&args, &d.0, None)).stdout.clone()).unwrap();
    assert!(table.lines().next().unwrap().contains("filter"), "{table}");
    assert_eq!(table.lines().count(), 1 + 1 + 24, "{table}");
    // A range that makes no sense names itself and the forms.
    let bad = kompakt(&["bench", "data.bin", "--codecs", "zstd:9-1"], &d.0, None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("zstd:9-1"));
}

#[test]
fn bench_recommends_a_configuration_per_goal_through_a_sink() {
    let d = Dir::new("bench-recommend");
    fs::write(d.path("data.bin"), sample()).unwrap();
    let args = [
        "bench",
        "data.bin",
        "--codecs",
        "none,lz4,zstd:1",
        "-T",
        "1",
        "--seconds",
        "0",
        "--sink-speed",
        "50MB/s",
        "--recommend",
        "-q",
    ];
    let out = ok(&kompakt(&[&args[..], &["--json"]].concat(), &d.0, None))
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in rows {
        assert_eq!(r["sink_mb_s"], 50.0);
        let write = r["write_mb_s"].as_f64().unwrap();
        let bound = 50.0 * r["ratio"].as_f64().unwrap();
        assert!(
            write <= bound * (1.0 + 1e-9) && write <= r["compress_mb_s"].as_f64().unwrap(),
            "{r}"
        );
    }
    let picks = v["recommendations"].as_array().unwrap();
    assert_eq!(picks.len(), 3);
    assert_eq!(picks[0]["goal"], "fastest write");
    for p in picks {
        assert!(["none", "lz4", "zstd:1"].contains(&p["codec"].as_str().unwrap()), "{p}");
    }
    let table = String::from_utf8(
        ok(&kompakt(&[&args[..], &["--plot", "lab.png"]].concat(), &d.0, None))
            .stdout
            .clone(),
    )
    .unwrap();
    assert!(table.contains("recommended for data.bin (through 50 MB/s)"), "{table}");
    assert_eq!(&fs::read(d.path("lab.png")).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
    assert!(table.contains("--codec "), "{table}");
    let bad = kompakt(&["bench", "data.bin", "--sink-speed", "fast"], &d.0, None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("200MB/s"));
}

#[test]
fn bench_measures_a_disk_and_writes_and_reads_through_it() {
    let d = Dir::new("bench-disk");
    let disk = Dir::new("bench-disk-target");
    fs::write(d.path("data.bin"), sample()).unwrap();
    let target = disk.0.to_str().unwrap();
    let args = [
        "bench",
        "data.bin",
        "--codecs",
        "lz4,zstd:1",
        "-T",
        "1",
        "--seconds",
        "0",
        "--disk",
        target,
        "--disk-bytes",
        "8M",
        "-q",
    ];
    let out = ok(&kompakt(&[&args[..], &["--json"]].concat(), &d.0, None))
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let figures = &v["disk"];
    assert_eq!(figures["path"], target);
    assert_eq!(figures["bytes"], 8 << 20);
    let (write, read) = (
        figures["write_bytes_per_sec"].as_f64().unwrap(),
        figures["read_bytes_per_sec"].as_f64().unwrap(),
    );
    assert!(
        write.is_finite() && write > 0.0 && read.is_finite() && read > 0.0,
        "{figures}"
    );
    assert!(figures["page_cache_dropped"].is_boolean(), "{figures}");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        // Writes through the measured write speed, reads through the measured read speed.
        let close = |key: &str, want: f64| (r[key].as_f64().unwrap() - want).abs() < 1e-9 * want;
        assert!(
            close("sink_write_mb_s", write / 1e6) && close("sink_read_mb_s", read / 1e6),
            "{r}"
        );
        let ratio = r["ratio"].as_f64().unwrap();
        assert!(
            r["write_mb_s"].as_f64().unwrap() <= write / 1e6 * ratio * (1.0 + 1e-9),
            "{r}"
        );
        assert!(
            r["read_mb_s"].as_f64().unwrap() <= read / 1e6 * ratio * (1.0 + 1e-9),
            "{r}"
        );
    }
    assert_eq!(disk.names(), Vec::<String>::new(), "no test file is left behind");
    // The table starts with the figures, and a file stands for its folder.
    fs::write(disk.path("out.kpk"), b"x").unwrap();
    let file = disk.path("out.kpk");
    let mut table_args = args.to_vec();
    table_args[9] = file.to_str().unwrap();
    table_args.push("--recommend");
    let table = String::from_utf8(ok(&kompakt(&table_args, &d.0, None)).stdout.clone()).unwrap();
    let first = table.lines().next().unwrap();
    assert!(first.starts_with(&format!("disk {target}: write ")), "{table}");
    assert!(first.contains("(8 MiB, fsync, "), "{table}");
    assert!(table.contains("MB/s read)"), "{table}");
    assert_eq!(disk.names(), ["out.kpk"]);

    // A given speed and a measured one: refused, naming both.
    let both = kompakt(
        &["bench", "data.bin", "--disk", target, "--sink-speed", "200MB/s"],
        &d.0,
        None,
    );
    assert_eq!(both.status.code(), Some(2));
    let err = String::from_utf8_lossy(&both.stderr);
    assert!(err.contains("--disk") && err.contains("--sink-speed"), "{err}");
    // A folder that is not there is named; so is a size too small to measure anything.
    let missing = disk.path("missing");
    let bad = kompakt(&["bench", "data.bin", "--disk", missing.to_str().unwrap()], &d.0, None);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains(missing.to_str().unwrap()) && err.contains("existing folder"),
        "{err}"
    );
    let bad = kompakt(
        &["bench", "data.bin", "--disk", target, "--disk-bytes", "4K"],
        &d.0,
        None,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--disk-bytes"));
    assert_eq!(disk.names(), ["out.kpk"]);
}

#[test]
fn bench_can_also_time_unverified_decompression() {
    let d = Dir::new("bench-unverified");
    fs::write(d.path("data.bin"), sample()).unwrap();
    let args = [
        "bench",
        "data.bin",
        "--codecs",
        "lz4,none",
        "-T",
        "1",
        "--seconds",
        "0",
        "--unverified",
    ];
    let json = ok(&kompakt(&[&args[..], &["--json", "-q"]].concat(), &d.0, None))
        .stdout
        .clone();
    let rows: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3, "memcpy + 2 codecs");
    for r in rows {
        assert!(r["decompress_mb_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["decompress_unverified_mb_s"].as_f64().unwrap() > 0.0, "{r}");
    }
    let table = String::from_utf8(ok(&kompakt(&[&args[..], &["-q"]].concat(), &d.0, None)).stdout.clone()).unwrap();
    let header = table.lines().next().unwrap();
    assert!(header.ends_with("unverified MB/s"), "{table}");
    let rows: Vec<_> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{table}");
    for row in rows {
        let last = row.split_whitespace().last().unwrap();
        assert!(last.parse::<f64>().unwrap() > 0.0, "{table}");
    }
}

fn noise(len: usize) -> Vec<u8> {
    let mut x = 0x2545F4914F6CDD1Du64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Waits for `child` at most `secs` seconds; kills it and fails the test on a hang.
fn wait_bounded(child: &mut std::process::Child, secs: u64, what: &str) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed().as_secs() >= secs {
            let _ = child.kill();
            panic!("{what}: still running after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_failing_output_is_an_error_not_a_hang() {
    let d = Dir::new("full");
    fs::write(d.path("noise.bin"), noise(30 << 20)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kompakt"))
        .args(["compress", "noise.bin", "-o", "-", "-q"])
        .current_dir(&d.0)
        .stdout(fs::File::create("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child, 60, "compress to /dev/full");
    assert_eq!(status.code(), Some(2));
}

#[test]
fn a_reader_that_goes_away_is_not_an_error() {
    let d = Dir::new("epipe");
    fs::write(d.path("noise.bin"), noise(8 << 20)).unwrap();
    ok(&kompakt(&["compress", "noise.bin", "-q"], &d.0, None));
    for args in [
        vec!["cat", "noise.bin.kpk"],
        vec!["decompress", "noise.bin.kpk", "-o", "-"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kompakt"))
            .args(&args)
            .current_dir(&d.0)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // 8 MiB cannot fit in a pipe buffer: closing our end makes the child's writes fail.
        drop(child.stdout.take());
        let status = wait_bounded(&mut child, 60, "writing to a closed pipe");
        assert_eq!(status.code(), Some(0), "{args:?}");
    }
}

/// 32 MB, half noise: it compresses, yet leaves many MiB to write back, so an adaptive
/// writer's pacing starts (which blocks go raw depends on the disk, so tests check only the
/// report line and the content).
fn half_noise() -> Vec<u8> {
    noise(16 << 20)
        .iter()
        .enumerate()
        .flat_map(|(i, &b)| [b, (i >> 16) as u8])
        .collect()
}

/// The raw blocks `compress --adapt` or `store put --adapt` reported, checked against the
/// file: every raw block of this data is the pacing's (its blocks all compress), and on Linux
/// the write's first blocks are raw, as the write-back has not started yet.
fn check_raw_report(said: &str, file: &Path, dir: &Path) {
    let reported: usize = said
        .split("--adapt: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {said:?}"));
    let out = kompakt(&["inspect", file.to_str().unwrap(), "--blocks", "--json"], dir, None);
    let v: serde_json::Value = serde_json::from_slice(&ok(&out).stdout).unwrap();
    let raw = v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["codec"] == "none")
        .count();
    assert_eq!(reported, raw, "{said}");
    if cfg!(target_os = "linux") {
        assert!(raw >= 1, "the probe stores the first blocks raw: {said}");
    }
}

#[test]
fn adaptive_store_puts_keep_the_content() {
    let dir = Dir::new("adapt-put");
    let data = half_noise();
    fs::write(dir.path("in.bin"), &data).unwrap();
    let out = kompakt(&["store", "put", "st", "big", "in.bin", "--adapt"], &dir.0, None);
    let said = String::from_utf8_lossy(&ok(&out).stderr).into_owned();
    let said_big = said.clone();
    assert!(
        said.contains("--adapt: ") && said.contains(" of 32 blocks stored raw"),
        "{said}"
    );
    // The same content put with --no-adapt has the same hash: the object is stored once.
    let plain = kompakt(&["store", "put", "st", "again", "in.bin", "--no-adapt"], &dir.0, None);
    let hash = |said: &str| said.split(" -> ").nth(1).map(|h| h.lines().next().unwrap().to_owned());
    let adapted = hash(&said).expect("put reports the hash");
    assert_eq!(Some(adapted), hash(&String::from_utf8_lossy(&ok(&plain).stderr)));
    ok(&kompakt(&["store", "verify", "st"], &dir.0, None));
    ok(&kompakt(
        &["store", "get", "st", "big", "--decompress", "-o", "back.bin"],
        &dir.0,
        None,
    ));
    assert!(fs::read(dir.path("back.bin")).unwrap() == data);
    // From stdin, 12 MiB: the last blocks are written as the stream ends, and counted too.
    let part = &data[..12 << 20];
    let piped = kompakt(&["store", "put", "st", "piped", "-", "--adapt"], &dir.0, Some(part));
    let said = String::from_utf8_lossy(&ok(&piped).stderr).into_owned();
    assert!(said.contains(" of 12 blocks stored raw"), "{said}");
    ok(&kompakt(
        &["store", "get", "st", "piped", "-o", "piped.kpk"],
        &dir.0,
        None,
    ));
    check_raw_report(&said, &dir.path("piped.kpk"), &dir.0);
    ok(&kompakt(&["store", "get", "st", "big", "-o", "big.kpk"], &dir.0, None));
    check_raw_report(&said_big, &dir.path("big.kpk"), &dir.0);
    // --no-adapt compresses every block (of content not stored yet: equal content is stored
    // once); the two flags together are refused.
    let other = &data[4 << 20..16 << 20];
    let fixed = kompakt(&["store", "put", "st", "fixed", "-", "--no-adapt"], &dir.0, Some(other));
    assert!(!String::from_utf8_lossy(&ok(&fixed).stderr).contains("stored raw"));
    ok(&kompakt(
        &["store", "get", "st", "fixed", "-o", "fixed.kpk"],
        &dir.0,
        None,
    ));
    let out = kompakt(&["inspect", "fixed.kpk", "--blocks", "--json"], &dir.0, None);
    let v: serde_json::Value = serde_json::from_slice(&ok(&out).stdout).unwrap();
    assert!(
        v["blocks"].as_array().unwrap().iter().all(|b| b["codec"] != "none"),
        "{v}"
    );
    let both = kompakt(
        &["store", "put", "st", "x", "in.bin", "--adapt", "--no-adapt"],
        &dir.0,
        None,
    );
    assert!(!both.status.success());
    // Without either flag, a store with the default codec adapts: the report names the
    // raw blocks when there were any (it depends on the disk), and the content is the same.
    let default = kompakt(&["store", "put", "st", "default", "in.bin"], &dir.0, None);
    let said = String::from_utf8_lossy(&ok(&default).stderr).into_owned();
    assert_eq!(hash(&said).expect("put reports the hash"), hash(&said_big).unwrap());
    if cfg!(target_os = "linux") {
        assert!(
            said.contains(" of 32 blocks stored raw while the disk waited (--no-adapt"),
            "{said}"
        );
    }
}

#[test]
fn adaptive_compression_keeps_the_content() {
    let dir = Dir::new("adapt");
    let data = half_noise();
    fs::write(dir.path("in.bin"), &data).unwrap();
    let out = kompakt(&["compress", "in.bin", "--adapt"], &dir.0, None);
    let said = String::from_utf8_lossy(&ok(&out).stderr).into_owned();
    assert!(
        said.contains("--adapt: ") && said.contains(" of 32 blocks stored raw"),
        "{said}"
    );
    check_raw_report(&said, &dir.path("in.bin.kpk"), &dir.0);
    ok(&kompakt(&["verify", "in.bin.kpk"], &dir.0, None));
    ok(&kompakt(&["decompress", "in.bin.kpk", "-o", "back.bin"], &dir.0, None));
    assert!(fs::read(dir.path("back.bin")).unwrap() == data);
    let refused = kompakt(&["compress", "in.bin", "--adapt", "-o", "-"], &dir.0, None);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("needs an output file"));
}

#[cfg(unix)]
#[test]
fn output_to_a_fifo_or_device_goes_into_it() {
    use std::os::unix::fs::FileTypeExt;
    let d = Dir::new("special");
    fs::write(d.path("data.bin"), sample()).unwrap();
    ok(&kompakt(&["compress", "data.bin", "-q"], &d.0, None));
    let fifo = d.path("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    ok(&kompakt(
        &["decompress", "data.bin.kpk", "-o", "pipe", "-q"],
        &d.0,
        None,
    ));
    assert!(reader.join().unwrap() == sample());
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // A copy of /dev/null, with --force as a user would try it (mknod needs root; CI has it).
    let null = d.path("null");
    if Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success())
    {
        ok(&kompakt(
            &["decompress", "data.bin.kpk", "-o", "null", "--force", "-q"],
            &d.0,
            None,
        ));
        assert!(fs::metadata(&null).unwrap().file_type().is_char_device());
    }
}

#[test]
fn output_to_dev_stdout_goes_where_stdout_goes() {
    let d = Dir::new("devstdout");
    fs::write(d.path("data.bin"), sample()).unwrap();
    ok(&kompakt(&["compress", "data.bin", "-q"], &d.0, None));
    // A pipe: /dev/stdout leads to `pipe:[…]`, which is no path.
    for dev in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"] {
        let out = kompakt(&["decompress", "data.bin.kpk", "-o", dev, "-q"], &d.0, None);
        assert!(ok(&out).stdout == sample(), "{dev}");
    }
    let out = kompakt(&["compress", "data.bin", "-o", "/dev/stdout", "-q"], &d.0, None);
    assert!(ok(&out).stdout == fs::read(d.path("data.bin.kpk")).unwrap());
    // A file opened to append (`>>`): what it held stays, the output follows, no --force.
    let log = d.path("log");
    fs::write(&log, b"before\n").unwrap();
    let appended = fs::OpenOptions::new().append(true).open(&log).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_kompakt"))
        .args(["decompress", "data.bin.kpk", "-o", "/dev/stdout", "-q"])
        .current_dir(&d.0)
        .stdout(appended)
        .status()
        .unwrap();
    assert!(status.success());
    let back = fs::read(&log).unwrap();
    assert!(back[..7] == *b"before\n" && back[7..] == sample());
    assert!(!d.names().iter().any(|n| n.ends_with(".tmp")), "{:?}", d.names());
}

#[test]
fn a_file_that_is_not_kompakt_is_called_so() {
    let d = Dir::new("not-kompakt");
    fs::write(
        d.path("hello.txt"),
        "hello, this is text and not a kompakt file at all\n".repeat(4),
    )
    .unwrap();
    let out = kompakt(&["verify", "hello.txt"], &d.0, None);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("NOT KOMPAKT") && text.contains("starts with \"hell\""),
        "{text}"
    );
    let out = kompakt(&["decompress", "hello.txt", "-o", "x"], &d.0, None);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a kompakt file (it starts with \"hell\""));
    // A kompakt file cut short is not "not kompakt".
    fs::write(d.path("data.bin"), sample()).unwrap();
    ok(&kompakt(&["compress", "data.bin", "-q"], &d.0, None));
    let whole = fs::read(d.path("data.bin.kpk")).unwrap();
    fs::write(d.path("cut.kpk"), &whole[..whole.len() - 7]).unwrap();
    let out = kompakt(&["verify", "cut.kpk"], &d.0, None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("DAMAGED") && text.contains("cut short"), "{text}");
}

#[test]
fn clean_removes_what_killed_writers_left() {
    let d = Dir::new("clean");
    fs::write(d.path("data.bin"), b"kept").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for name in [".data.bin.4000000.0.1a.tmp", ".other.kpk.4000000.3.ff.tmp"] {
        let f = fs::File::create(d.path(name)).unwrap();
        f.set_len(2048).unwrap();
        f.set_modified(old).unwrap();
    }
    let out = kompakt(&["clean", "data.bin"], &d.0, None);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("removed 1 temporary file (2.0 KiB)"));
    assert_eq!(d.names(), [".other.kpk.4000000.3.ff.tmp", "data.bin"]);
    ok(&kompakt(&["clean", "."], &d.0, None));
    assert_eq!(d.names(), ["data.bin"]);
}

#[test]
fn head_reports_damage_with_the_exit_code_of_every_command() {
    let d = Dir::new("head-damage");
    let out = kompakt(&["head", "missing.kpk"], &d.0, None);
    assert_eq!(out.status.code(), Some(2), "a missing file is not damage");
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.kpk"));
    fs::write(
        d.path("text.kpk"),
        "plain text, no table here at all, long enough to be read whole\n".repeat(3),
    )
    .unwrap();
    let out = kompakt(&["head", "text.kpk"], &d.0, None);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("text.kpk: not a kompakt file"));
}
