//! What a kompakt file holds, told by its footer metadata (docs/FORMAT.md).

/// The kinds of kompakt file: every front end recognises them the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// Streams of bytes, with metadata that names no layout (or none).
    Plain,
    /// A table file (metadata starting with the table magic).
    Table,
    /// An object saved by the Python package (`"kompakt": "python-pickle"`).
    PythonObject,
    /// An object saved by the R package (`"kompakt": "r-serialize"`).
    RObject,
}

/// A file's metadata is parsed as JSON only up to this size: object descriptions are small,
/// and a plain file's metadata may be anything.
const MAX_DESCRIPTION_LEN: usize = 1 << 20;

impl FileKind {
    /// The kind of a file whose footer metadata is `metadata`. Object descriptions are JSON
    /// objects whose `"kompakt"` member names the layout, with any whitespace JSON allows;
    /// metadata that is not such JSON makes a plain file.
    pub fn of_metadata(metadata: &[u8]) -> FileKind {
        if kompakt_table::is_table_metadata(metadata) {
            return FileKind::Table;
        }
        let trimmed = metadata.trim_ascii_start();
        if !trimmed.starts_with(b"{") || metadata.len() > MAX_DESCRIPTION_LEN {
            return FileKind::Plain;
        }
        // serde_json refuses nesting deeper than 128 levels: hostile metadata costs no stack.
        let Ok(serde_json::Value::Object(description)) = serde_json::from_slice::<serde_json::Value>(metadata) else {
            return FileKind::Plain;
        };
        match description.get("kompakt").and_then(|v| v.as_str()) {
            Some("python-pickle") => FileKind::PythonObject,
            Some("r-serialize") => FileKind::RObject,
            _ => FileKind::Plain,
        }
    }

    /// The kind's name: `"plain"`, `"table"`, `"python-object"`, `"r-object"`.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Plain => "plain",
            FileKind::Table => "table",
            FileKind::PythonObject => "python-object",
            FileKind::RObject => "r-object",
        }
    }

    /// What to read a file of this kind with, for messages of readers that refuse it.
    pub fn read_with(self) -> &'static str {
        match self {
            FileKind::Plain => "kompakt decompress, kompakt.decompress or kpk_reader",
            FileKind::Table => "kompakt.read_table (Python), read_kpk_table (R) or kompakt head",
            FileKind::PythonObject => "kompakt.load in Python",
            FileKind::RObject => "kompakt::kpk_read() in R",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_descriptions_are_read_as_json_whatever_their_spacing() {
        let compact = br#"{"kompakt":"r-serialize","version":1,"serialize":{"stream":0}}"#;
        let spaced = b"{\"kompakt\": \"r-serialize\", \"version\": 1,\n \"serialize\": {\"stream\": 0}}";
        let reordered = br#"{ "version" : 1 , "kompakt" : "r-serialize" }"#;
        for m in [&compact[..], &spaced[..], &reordered[..]] {
            assert_eq!(
                FileKind::of_metadata(m),
                FileKind::RObject,
                "{}",
                String::from_utf8_lossy(m)
            );
        }
        let python = br#"{"kompakt": "python-pickle", "version": 1, "pickle": {"stream": 0, "protocol": 5}}"#;
        assert_eq!(FileKind::of_metadata(python), FileKind::PythonObject);
    }

    #[test]
    fn anything_else_is_plain() {
        for m in [
            &b""[..],
            b"hello",
            b"{not json",
            br#"{"kompakt": 3}"#,
            br#"["kompakt", "r-serialize"]"#,
            br#"{"note": "\"kompakt\":\"r-serialize\""}"#,
            &[b'['; 100_000][..],
        ] {
            assert_eq!(
                FileKind::of_metadata(m),
                FileKind::Plain,
                "{}",
                String::from_utf8_lossy(m)
            );
        }
        let deep = format!("{}{}", "{\"a\":".repeat(10_000), "1");
        assert_eq!(FileKind::of_metadata(deep.as_bytes()), FileKind::Plain);
    }
}
