//! How long the first open and the first 1000-row read of two columns (1 and 2) take in a
//! fresh process, Rust alone (no Python), for each table file named, in order:
//!
//! `cargo run --release -p kompakt-table --example first_read -- a.kpk b.kpk a.kpk`
//!
//! The first file pays what a process pays once (bench/RESULTS.md, "First calls"); a second
//! file, or the same one again, shows what an open costs by itself.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for path in std::env::args().skip(1) {
        let t0 = Instant::now();
        let table = kompakt_table::TableReader::open(&path)?;
        let t1 = Instant::now();
        let middle = table.num_rows() / 2;
        let columns = [1, 2].map(|c: usize| c.min(table.schema().fields().len().saturating_sub(1)));
        let (_, arrays) = table.read_columns_as(
            Some(&columns),
            middle..(middle + 1000).min(table.num_rows()),
            0,
            kompakt_table::StringLayout::AsStored,
        )?;
        let t2 = Instant::now();
        println!(
            "{path}: open {:?}, first read {:?} ({} columns)",
            t1 - t0,
            t2 - t1,
            arrays.len()
        );
    }
    Ok(())
}
