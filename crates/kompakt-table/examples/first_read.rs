use std::time::Instant;
fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    for path in paths {
        let t0 = Instant::now();
        let t = kompakt_table::TableReader::open(&path).unwrap();
        let t1 = Instant::now();
        let n = t.num_rows() / 2;
        let (_, cols) = t.read_columns_as(Some(&[1, 2]), n..n + 1000, 0, kompakt_table::StringLayout::AsStored).unwrap();
        let t2 = Instant::now();
        println!("{path}: open {:?} first {:?} ({})", t1 - t0, t2 - t1, cols.len());
    }
}
