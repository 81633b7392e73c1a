//! The table of bad options every front end's tests check (`tests/bad_options.tsv`): the same
//! input must give the same error kind and message through every door.

/// The table, as text (tab-separated; `#` starts a comment line).
pub const BAD_OPTIONS_TSV: &str = include_str!("../tests/bad_options.tsv");

/// One row: options given, the kind of error they must give and a part of its message.
#[derive(Debug, Clone)]
pub struct BadOption {
    /// What the row checks.
    pub case: String,
    /// Option names (`codec`, `level`, `threads`, `typesize`, `filter`, `block_size`) and values.
    pub options: Vec<(String, String)>,
    /// The [`kompakt::ErrorKind`] name.
    pub kind: String,
    /// Text the message must contain.
    pub message: String,
}

impl BadOption {
    /// The value of option `name`, when the row gives it.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.options.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// Every row of the table.
pub fn bad_options() -> Vec<BadOption> {
    BAD_OPTIONS_TSV
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 4, "four tab-separated columns: {line:?}");
            let options = cols[1]
                .split(';')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').expect("name=value");
                    (k.to_string(), v.to_string())
                })
                .collect();
            BadOption {
                case: cols[0].into(),
                options,
                kind: cols[2].into(),
                message: cols[3].into(),
            }
        })
        .collect()
}
