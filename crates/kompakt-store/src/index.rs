//! `index.sqlite`: keys, the object table, and the bytes of small objects.
//!
//! SQLite in WAL mode gives what a shared cache needs: many processes read while one writes,
//! each write is one atomic transaction, and a tiny value costs two B-tree updates (its key's
//! row and the key index), not a file system round trip.

use crate::error::{Error, Result};
use kompakt::codec::DictionaryId;
use kompakt::stream::ContentHash;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::Path;
use std::time::Duration;

/// Index schema version (`PRAGMA user_version`) of a store that holds no dictionary. Version
/// 2 keeps small values in the key's row; an index of version 1 is upgraded when a store is
/// opened.
pub const INDEX_VERSION: i64 = 2;
/// Index version once a namespace has adopted a zstd dictionary: values may then need one, so
/// a kompakt that reads only versions 1 and 2 must refuse the store. The tables and columns
/// for dictionaries are added to every index when a store is opened (older kompakt ignores
/// them); only the first adoption raises the version.
pub const INDEX_VERSION_DICTIONARIES: i64 = 3;
/// Page cache per connection, in KiB.
const PAGE_CACHE_KIB: u32 = 64 * 1024;
/// WAL pages after which a commit checkpoints.
const WAL_CHECKPOINT_PAGES: i64 = 4000;

/// The tables of dictionaries, and the column that names the dictionary a value needs.
const DICTIONARY_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS dictionaries (
    id BLOB PRIMARY KEY,
    namespace TEXT NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS namespace_dictionaries (
    namespace TEXT PRIMARY KEY,
    id BLOB NOT NULL
);";

/// File name of the index in the store's folder.
pub const INDEX_FILE: &str = "index.sqlite";

const OBJECTS_TABLE: &str = "
CREATE TABLE IF NOT EXISTS objects (
    hash BLOB PRIMARY KEY,
    raw_size INTEGER NOT NULL,
    stored_size INTEGER NOT NULL,
    data BLOB
);";

/// The key table of version 2. A rowid table: rows are appended, and only the small unique
/// index is updated in key order; with values in the rows, a WITHOUT ROWID table (version 1)
/// splits pages of a few rows each. Its name differs from version 1's `keys`, so that a
/// process of an older kompakt that has the store open gets "no such table" after the
/// upgrade instead of writing rows it does not understand.
const KEYS_TABLE: &str = "
CREATE TABLE IF NOT EXISTS keys_v2 (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    hash BLOB NOT NULL,
    raw_size INTEGER,
    data BLOB,
    UNIQUE (namespace, key)
);";

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Error {
        use rusqlite::ErrorCode as C;
        match e.sqlite_error_code() {
            Some(C::DatabaseCorrupt | C::NotADatabase) => Error::corrupt("store index", 0, e.to_string()),
            Some(C::DatabaseBusy | C::DatabaseLocked) => Error::from(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the store stayed locked by another writer: {e}"),
            )),
            _ => Error::Index(e.to_string()),
        }
    }
}

/// Opens (creating when allowed) the index of the store at `root`.
pub fn open(root: &Path, create: bool, durable: bool) -> Result<Connection> {
    let path = root.join(INDEX_FILE);
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    } else if !path.is_file() {
        return Err(Error::Store(format!(
            "{} is missing: this store's index was deleted or never completed (its objects are in {})",
            path.display(),
            root.join("objects").display()
        )));
    }
    let conn = Connection::open_with_flags(&path, flags)?;
    // Writers queue behind each other; gc of a large store may hold the lock for seconds.
    conn.busy_timeout(Duration::from_secs(120))?;
    // Switching a new database to WAL returns "busy" at once, without waiting, while another
    // process does the same: several processes creating one store retry here.
    retry_busy(|| {
        // auto_vacuum only takes effect before the first page is written, so before WAL.
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
        conn.pragma_update(None, "journal_mode", "WAL")
    })?;
    // NORMAL in WAL mode: every transaction is atomic and survives a process crash; a power
    // failure may drop the last transactions but never corrupts. `durable` syncs each commit.
    conn.pragma_update(None, "synchronous", if durable { "FULL" } else { "NORMAL" })?;
    // SQLite's default page cache (2 MB) holds the index of a few thousand small objects; past
    // that every lookup copies pages in through pread. Pages are allocated as used, so a small
    // store pays nothing for the larger limit.
    conn.pragma_update(None, "cache_size", -(PAGE_CACHE_KIB as i64))?;
    // A checkpoint copies the WAL's pages into the database and syncs it. SQLite's default (every
    // 1000 pages, 4 MB) made it a fifth of a tiny set's time; every 4000 pages it is a quarter
    // as often, and a page written again in between is copied once. The WAL file stays at about
    // 16 MB.
    conn.pragma_update(None, "wal_autocheckpoint", WAL_CHECKPOINT_PAGES)?;
    let version: i64 = retry_busy(|| conn.pragma_query_value(None, "user_version", |r| r.get(0)))?;
    if version > INDEX_VERSION_DICTIONARIES {
        return Err(Error::Store(format!(
            "{}: index version {version}; this kompakt reads versions 1 to {INDEX_VERSION_DICTIONARIES}: upgrade kompakt",
            path.display()
        )));
    }
    if version < INDEX_VERSION {
        retry_busy(|| upgrade(&conn))?;
    }
    if !has_dictionary_schema(&conn)? {
        retry_busy(|| in_write_transaction(&conn, add_dictionary_schema))?;
    }
    Ok(conn)
}

fn has_dictionary_schema(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT (SELECT count(*) FROM pragma_table_info('keys_v2') WHERE name = 'dictionary')
              + (SELECT count(*) FROM pragma_table_info('objects') WHERE name = 'dictionary')
              + (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'namespace_dictionaries') = 3",
        [],
        |r| r.get(0),
    )
}

/// Adds the dictionary tables and columns (checked again under the write lock: another
/// process may have added them meanwhile). The version stays as it is.
fn add_dictionary_schema(conn: &Connection) -> rusqlite::Result<()> {
    for table in ["keys_v2", "objects"] {
        let present: bool = conn.query_row(
            &format!("SELECT count(*) > 0 FROM pragma_table_info('{table}') WHERE name = 'dictionary'"),
            [],
            |r| r.get(0),
        )?;
        if !present {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN dictionary BLOB"))?;
        }
    }
    conn.execute_batch(DICTIONARY_SCHEMA)
}

/// Runs `f` inside `BEGIN IMMEDIATE` ... `COMMIT` (rolled back if it fails).
fn in_write_transaction(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    match f(conn) {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Creates the schema, or upgrades an index of version 1, in one transaction (another process
/// may have done it first: the version is read again under the write lock). Idempotent: an
/// existing version-2 key table is kept, and version-1 rows are copied only where the key is
/// not already there (an old kompakt creating the store at the same moment can leave both).
fn upgrade(conn: &Connection) -> rusqlite::Result<()> {
    in_write_transaction(conn, |conn| {
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version >= INDEX_VERSION {
            return Ok(()); // done by another process meanwhile (a newer one is refused later)
        }
        conn.execute_batch(OBJECTS_TABLE)?;
        conn.execute_batch(KEYS_TABLE)?;
        merge_version_1_keys(conn)?;
        conn.pragma_update(None, "user_version", INDEX_VERSION)
    })
}

/// Moves the rows of a version-1 key table, if there is one, into `keys_v2` (where the key is
/// not there yet) and drops it. Besides the upgrade, gc calls this
/// inside its write transaction: an older kompakt creating the store at the same moment as
/// this one can recreate `keys` after the upgrade and write keys there, which gc must not
/// take for unreferenced (dropping the table also stops that process's writes).
pub fn merge_version_1_keys(conn: &Connection) -> rusqlite::Result<()> {
    let old_keys: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'keys'",
        [],
        |r| r.get(0),
    )?;
    if old_keys {
        conn.execute_batch(
            "INSERT OR IGNORE INTO keys_v2 (namespace, key, hash) SELECT namespace, key, hash FROM keys;
             DROP TABLE keys;",
        )?;
        // Never lowers the version: a store with dictionaries stays at version 3.
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        conn.pragma_update(None, "user_version", version.max(INDEX_VERSION))?;
    }
    Ok(())
}

/// Runs `f` until it does not fail with "busy" (for at most a minute).
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = std::time::Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match f() {
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                ) && start.elapsed() < Duration::from_secs(60) =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// One row of the object table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRow {
    pub hash: ContentHash,
    pub raw_size: u64,
    pub stored_size: u64,
    /// The file's bytes for an inline object; None for an object in `objects/`.
    pub data: Option<Vec<u8>>,
    /// The zstd dictionary its blocks were compressed with, if any.
    pub dictionary: Option<DictionaryId>,
}

fn dictionary_column(bytes: Option<Vec<u8>>) -> rusqlite::Result<Option<DictionaryId>> {
    bytes
        .map(|b| {
            <[u8; 8]>::try_from(&b[..])
                .map(|id| DictionaryId(u64::from_le_bytes(id)))
                .map_err(|_| {
                    rusqlite::Error::FromSqlConversionFailure(
                        0,
                        rusqlite::types::Type::Blob,
                        format!("a dictionary id of {} bytes, expected 8", b.len()).into(),
                    )
                })
        })
        .transpose()
}

fn id_bytes(id: DictionaryId) -> [u8; 8] {
    id.0.to_le_bytes()
}

fn hash_column(bytes: Vec<u8>) -> rusqlite::Result<ContentHash> {
    ContentHash::from_bytes(&bytes).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Blob,
            format!("a hash of {} bytes, expected 16", bytes.len()).into(),
        )
    })
}

fn size(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The object a key points at: Ok(None) if the key does not exist, an error if it points at
/// an object the index does not hold.
pub fn lookup(conn: &Connection, namespace: &str, key: &str) -> Result<Option<ObjectRow>> {
    let mut key_stmt =
        conn.prepare_cached("SELECT hash, raw_size, data, dictionary FROM keys_v2 WHERE namespace = ?1 AND key = ?2")?;
    // The key's object in one statement (one snapshot): the row found is the one the key
    // pointed at then, even if the key changes between the two statements.
    let mut object_stmt = conn.prepare_cached(
        "SELECT hash, raw_size, stored_size, data, dictionary FROM objects
         WHERE hash = (SELECT hash FROM keys_v2 WHERE namespace = ?1 AND key = ?2 AND data IS NULL)",
    )?;
    let mut seen = None;
    for _ in 0..8 {
        let Some((hash, raw_size, data, dictionary)) = key_stmt
            .query_row(params![namespace, key], |r| {
                Ok((
                    hash_column(r.get(0)?)?,
                    r.get::<_, Option<i64>>(1)?,
                    r.get::<_, Option<Vec<u8>>>(2)?,
                    dictionary_column(r.get(3)?)?,
                ))
            })
            .optional()?
        else {
            return Ok(None);
        };
        if let Some(data) = data {
            return Ok(Some(ObjectRow {
                hash,
                raw_size: raw_size.unwrap_or(0).max(0) as u64,
                stored_size: data.len() as u64,
                data: Some(data),
                dictionary,
            }));
        }
        let row = object_stmt
            .query_row(params![namespace, key], |r| {
                Ok(ObjectRow {
                    hash: hash_column(r.get(0)?)?,
                    raw_size: r.get::<_, i64>(1)?.max(0) as u64,
                    stored_size: r.get::<_, i64>(2)?.max(0) as u64,
                    data: r.get(3)?,
                    dictionary: dictionary_column(r.get(4)?)?,
                })
            })
            .optional()?;
        if row.is_some() {
            return Ok(row);
        }
        if seen == Some(hash) {
            return Err(Error::corrupt(
                "store index",
                0,
                format!("key {key:?} points at object {hash}, which the index does not hold"),
            ));
        }
        // The key may have been set, and its old object collected, between the two queries:
        // look again.
        seen = Some(hash);
    }
    Err(Error::from(std::io::Error::other(format!(
        "key {key:?} kept changing while it was read"
    ))))
}

/// Whether the object is held, and if so whether inline (Some(true)) or as a file.
pub fn object_kind(conn: &Connection, hash: ContentHash) -> Result<Option<bool>> {
    let mut stmt = conn.prepare_cached("SELECT data IS NOT NULL FROM objects WHERE hash = ?1")?;
    Ok(stmt.query_row([&hash.to_bytes()[..]], |r| r.get(0)).optional()?)
}

/// Inserts the object row unless a row with its hash exists; returns whether it inserted.
pub fn insert_object_if_absent(conn: &Connection, row: &ObjectRow) -> Result<bool> {
    Ok(put_object(conn, "INSERT OR IGNORE", row)? > 0)
}

/// Inserts the object row, replacing a row with its hash.
pub fn replace_object(conn: &Connection, row: &ObjectRow) -> Result<()> {
    put_object(conn, "INSERT OR REPLACE", row).map(drop)
}

/// Runs `verb` (an INSERT form) on the object row; returns the rows changed.
fn put_object(conn: &Connection, verb: &str, row: &ObjectRow) -> Result<usize> {
    let sql =
        format!("{verb} INTO objects (hash, raw_size, stored_size, data, dictionary) VALUES (?1, ?2, ?3, ?4, ?5)");
    Ok(conn.prepare_cached(&sql)?.execute(params![
        &row.hash.to_bytes()[..],
        size(row.raw_size),
        size(row.stored_size),
        row.data.as_deref(),
        row.dictionary.map(id_bytes)
    ])?)
}

/// Points the key at the object `hash`, held in the object table or as a file.
pub fn set_key(conn: &Connection, namespace: &str, key: &str, hash: ContentHash) -> Result<()> {
    put_key(conn, namespace, key, hash, None, None)
}

/// Sets the key to a small object held in its own row: `data` is the kompakt file, compressed
/// with `dictionary` if there is one.
pub fn set_key_value(
    conn: &Connection,
    namespace: &str,
    key: &str,
    hash: ContentHash,
    raw_size: u64,
    data: &[u8],
    dictionary: Option<DictionaryId>,
) -> Result<()> {
    put_key(conn, namespace, key, hash, Some((raw_size, data)), dictionary)
}

fn put_key(
    conn: &Connection,
    namespace: &str,
    key: &str,
    hash: ContentHash,
    value: Option<(u64, &[u8])>,
    dictionary: Option<DictionaryId>,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO keys_v2 (namespace, key, hash, raw_size, data, dictionary) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (namespace, key) DO UPDATE
         SET hash = excluded.hash, raw_size = excluded.raw_size, data = excluded.data,
             dictionary = excluded.dictionary",
    )?
    .execute(params![
        namespace,
        key,
        &hash.to_bytes()[..],
        value.map(|(raw, _)| size(raw)),
        value.map(|(_, data)| data),
        dictionary.map(id_bytes)
    ])?;
    Ok(())
}

pub fn delete_key(conn: &Connection, namespace: &str, key: &str) -> Result<bool> {
    let n = conn
        .prepare_cached("DELETE FROM keys_v2 WHERE namespace = ?1 AND key = ?2")?
        .execute(params![namespace, key])?;
    Ok(n > 0)
}

/// Deletes `key` only while it still points at `hash` (a writer may have just repointed it).
pub fn delete_key_if(conn: &Connection, namespace: &str, key: &str, hash: ContentHash) -> Result<bool> {
    let n = conn
        .prepare_cached("DELETE FROM keys_v2 WHERE namespace = ?1 AND key = ?2 AND hash = ?3")?
        .execute(params![namespace, key, &hash.to_bytes()[..]])?;
    Ok(n > 0)
}

pub fn clear(conn: &Connection, namespace: Option<&str>) -> Result<u64> {
    let n = match namespace {
        Some(ns) => conn.execute("DELETE FROM keys_v2 WHERE namespace = ?1", [ns])?,
        None => conn.execute("DELETE FROM keys_v2", [])?,
    };
    Ok(n as u64)
}

/// The hash `key` points at and whether its value is held in the key's row.
pub fn key_target(conn: &Connection, namespace: &str, key: &str) -> Result<Option<(ContentHash, bool)>> {
    let mut stmt =
        conn.prepare_cached("SELECT hash, data IS NOT NULL FROM keys_v2 WHERE namespace = ?1 AND key = ?2")?;
    Ok(stmt
        .query_row(params![namespace, key], |r| Ok((hash_column(r.get(0)?)?, r.get(1)?)))
        .optional()?)
}

pub fn hash_of(conn: &Connection, namespace: &str, key: &str) -> Result<Option<ContentHash>> {
    Ok(key_target(conn, namespace, key)?.map(|(hash, _)| hash))
}

pub fn keys(conn: &Connection, namespace: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT key FROM keys_v2 WHERE namespace = ?1 ORDER BY key")?;
    let rows = stmt.query_map([namespace], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn count_keys(conn: &Connection, namespace: &str) -> Result<u64> {
    let n: i64 = conn
        .prepare_cached("SELECT count(*) FROM keys_v2 WHERE namespace = ?1")?
        .query_row([namespace], |r| r.get(0))?;
    Ok(n as u64)
}

/// Namespaces with their key counts.
pub fn namespaces(conn: &Connection) -> Result<Vec<(String, u64)>> {
    let mut stmt = conn.prepare("SELECT namespace, count(*) FROM keys_v2 GROUP BY namespace ORDER BY namespace")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every object (without the inline bytes).
pub fn objects(conn: &Connection) -> Result<Vec<ObjectSummary>> {
    let mut stmt =
        conn.prepare("SELECT hash, raw_size, stored_size, data IS NOT NULL, dictionary FROM objects ORDER BY hash")?;
    let rows = stmt.query_map([], |r| {
        Ok(ObjectSummary {
            hash: hash_column(r.get(0)?)?,
            raw_size: r.get::<_, i64>(1)?.max(0) as u64,
            stored_size: r.get::<_, i64>(2)?.max(0) as u64,
            inline: r.get(3)?,
            dictionary: dictionary_column(r.get(4)?)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// One row of the object table, without its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectSummary {
    pub hash: ContentHash,
    pub raw_size: u64,
    pub stored_size: u64,
    pub inline: bool,
    pub dictionary: Option<DictionaryId>,
}

/// Count, raw bytes and stored bytes of the values held in key rows.
pub fn key_values_summary(conn: &Connection) -> Result<(u64, u64, u64)> {
    let row = conn
        .prepare_cached(
            "SELECT count(*), coalesce(sum(raw_size), 0), coalesce(sum(length(data)), 0)
             FROM keys_v2 WHERE data IS NOT NULL",
        )?
        .query_row([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        })?;
    Ok((row.0.max(0) as u64, row.1.max(0) as u64, row.2.max(0) as u64))
}

/// A value held in a key's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    pub row: i64,
    pub namespace: String,
    pub key: String,
    pub object: ObjectRow,
}

/// The largest row id of the key table (0 when empty): where a verify of key-held values stops,
/// so that writes during it do not extend it.
pub fn last_key_row(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT coalesce(max(rowid), 0) FROM keys_v2", [], |r| r.get(0))?)
}

/// Up to `limit` values held in key rows, in row order after row `after` and up to row
/// `until` (for a verify that does not hold every value in memory at once).
pub fn key_values_between(conn: &Connection, after: i64, until: i64, limit: usize) -> Result<Vec<KeyValue>> {
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, namespace, key, hash, raw_size, data, dictionary FROM keys_v2
         WHERE rowid > ?1 AND rowid <= ?2 AND data IS NOT NULL ORDER BY rowid LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![after, until, size(limit as u64)], |r| {
        let data: Vec<u8> = r.get(5)?;
        Ok(KeyValue {
            row: r.get(0)?,
            namespace: r.get(1)?,
            key: r.get(2)?,
            object: ObjectRow {
                hash: hash_column(r.get(3)?)?,
                raw_size: r.get::<_, Option<i64>>(4)?.unwrap_or(0).max(0) as u64,
                stored_size: data.len() as u64,
                data: Some(data),
                dictionary: dictionary_column(r.get(6)?)?,
            },
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn inline_data(conn: &Connection, hash: ContentHash) -> Result<Option<Vec<u8>>> {
    let mut stmt = conn.prepare_cached("SELECT data FROM objects WHERE hash = ?1")?;
    Ok(stmt
        .query_row([&hash.to_bytes()[..]], |r| r.get::<_, Option<Vec<u8>>>(0))
        .optional()?
        .flatten())
}

/// Keys whose object row is missing (an index that lost rows): (namespace, key, hash).
pub fn dangling_keys(conn: &Connection) -> Result<Vec<(String, String, ContentHash)>> {
    let mut stmt = conn.prepare(
        "SELECT k.namespace, k.key, k.hash FROM keys_v2 k LEFT JOIN objects o ON o.hash = k.hash
         WHERE o.hash IS NULL AND k.data IS NULL",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, hash_column(r.get(2)?)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Deletes the objects no key without data points at; returns (hash, stored size, inline) of each.
pub fn delete_unreferenced(conn: &Connection) -> Result<Vec<(ContentHash, u64, bool)>> {
    let mut stmt = conn.prepare(
        // No index on keys_v2.hash (it would cost every set a page write): SQLite builds a
        // temporary one for the IN list, so this is one pass over each table. A key holding
        // its value references no object.
        "DELETE FROM objects WHERE hash NOT IN (SELECT hash FROM keys_v2 WHERE data IS NULL)
         RETURNING hash, stored_size, data IS NOT NULL",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((hash_column(r.get(0)?)?, r.get::<_, i64>(1)?.max(0) as u64, r.get(2)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A key with its object, as `kompakt store ls --long` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Namespace.
    pub namespace: String,
    /// Key.
    pub key: String,
    /// Content hash of its object.
    pub hash: ContentHash,
    /// Raw bytes of the object.
    pub raw_size: u64,
    /// Stored bytes of the object.
    pub stored_size: u64,
}

/// Keys of a namespace (every namespace if None) with their objects.
pub fn entries(conn: &Connection, namespace: Option<&str>) -> Result<Vec<Entry>> {
    let mut stmt = conn.prepare(
        "SELECT k.namespace, k.key, k.hash,
                CASE WHEN k.data IS NULL THEN coalesce(o.raw_size, 0) ELSE coalesce(k.raw_size, 0) END,
                CASE WHEN k.data IS NULL THEN coalesce(o.stored_size, 0) ELSE length(k.data) END
         FROM keys_v2 k LEFT JOIN objects o ON o.hash = k.hash AND k.data IS NULL
         WHERE ?1 IS NULL OR k.namespace = ?1 ORDER BY k.namespace, k.key",
    )?;
    let rows = stmt.query_map([namespace], |r| {
        Ok(Entry {
            namespace: r.get(0)?,
            key: r.get(1)?,
            hash: hash_column(r.get(2)?)?,
            raw_size: r.get::<_, i64>(3)?.max(0) as u64,
            stored_size: r.get::<_, i64>(4)?.max(0) as u64,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The bytes of dictionary `id`, if the index holds it.
pub fn dictionary(conn: &Connection, id: DictionaryId) -> Result<Option<Vec<u8>>> {
    let mut stmt = conn.prepare_cached("SELECT data FROM dictionaries WHERE id = ?1")?;
    Ok(stmt.query_row([&id_bytes(id)[..]], |r| r.get(0)).optional()?)
}

/// The dictionary `namespace` has adopted: its id and bytes.
pub fn namespace_dictionary(conn: &Connection, namespace: &str) -> Result<Option<(DictionaryId, Vec<u8>)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT n.id, d.data FROM namespace_dictionaries n JOIN dictionaries d ON d.id = n.id
         WHERE n.namespace = ?1",
    )?;
    Ok(stmt
        .query_row([namespace], |r| {
            Ok((dictionary_column(r.get(0)?)?.unwrap_or(DictionaryId(0)), r.get(1)?))
        })
        .optional()?)
}

/// Inserts the dictionary unless the index holds it; raises the index version to 3 when it
/// inserts (values compressed with it are about to be written). Returns whether it inserted.
pub fn insert_dictionary(conn: &Connection, namespace: &str, id: DictionaryId, data: &[u8]) -> Result<bool> {
    let inserted = conn
        .prepare_cached("INSERT OR IGNORE INTO dictionaries (id, namespace, data) VALUES (?1, ?2, ?3)")?
        .execute(params![&id_bytes(id)[..], namespace, data])?
        > 0;
    if inserted {
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version < INDEX_VERSION_DICTIONARIES {
            conn.pragma_update(None, "user_version", INDEX_VERSION_DICTIONARIES)?;
        }
    }
    Ok(inserted)
}

/// Makes `id` (already inserted) the dictionary of `namespace` unless it has one; returns
/// the namespace's dictionary afterwards.
pub fn adopt_dictionary(conn: &Connection, namespace: &str, id: DictionaryId) -> Result<DictionaryId> {
    conn.prepare_cached("INSERT OR IGNORE INTO namespace_dictionaries (namespace, id) VALUES (?1, ?2)")?
        .execute(params![namespace, &id_bytes(id)[..]])?;
    let current: Vec<u8> = conn
        .prepare_cached("SELECT id FROM namespace_dictionaries WHERE namespace = ?1")?
        .query_row([namespace], |r| r.get(0))?;
    Ok(dictionary_column(Some(current))?.unwrap_or(id))
}

/// Makes `id` (already inserted) the dictionary of `namespace`, replacing any it had.
pub fn replace_namespace_dictionary(conn: &Connection, namespace: &str, id: DictionaryId) -> Result<()> {
    conn.prepare_cached("INSERT OR REPLACE INTO namespace_dictionaries (namespace, id) VALUES (?1, ?2)")?
        .execute(params![namespace, &id_bytes(id)[..]])?;
    Ok(())
}

/// One row of the dictionary table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictionaryRow {
    pub id: DictionaryId,
    pub namespace: String,
    pub data: Vec<u8>,
}

/// Every dictionary, with its bytes (a store holds a few, one per namespace at most in use).
pub fn dictionaries(conn: &Connection) -> Result<Vec<DictionaryRow>> {
    let mut stmt = conn.prepare("SELECT id, namespace, data FROM dictionaries ORDER BY namespace, id")?;
    let rows = stmt.query_map([], |r| {
        Ok(DictionaryRow {
            id: dictionary_column(r.get(0)?)?.unwrap_or(DictionaryId(0)),
            namespace: r.get(1)?,
            data: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Number and total bytes of the dictionaries.
pub fn dictionaries_summary(conn: &Connection) -> Result<(u64, u64)> {
    let (n, bytes): (i64, i64) = conn
        .prepare_cached("SELECT count(*), coalesce(sum(length(data)), 0) FROM dictionaries")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok((n.max(0) as u64, bytes.max(0) as u64))
}

/// Values that name a dictionary the index does not hold: (what, dictionary).
pub fn dangling_dictionaries(conn: &Connection) -> Result<Vec<(String, DictionaryId)>> {
    let mut stmt = conn.prepare(
        "SELECT 'key ' || quote(namespace) || '/' || quote(key), dictionary FROM keys_v2
         WHERE dictionary IS NOT NULL AND dictionary NOT IN (SELECT id FROM dictionaries)
         UNION ALL
         SELECT 'object ' || lower(hex(hash)), dictionary FROM objects
         WHERE dictionary IS NOT NULL AND dictionary NOT IN (SELECT id FROM dictionaries)
         UNION ALL
         SELECT 'namespace ' || quote(namespace), id FROM namespace_dictionaries
         WHERE id NOT IN (SELECT id FROM dictionaries)",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get(0)?, dictionary_column(r.get(1)?)?.unwrap_or(DictionaryId(0))))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Forgets the dictionaries of namespaces that hold no key, then deletes the dictionaries no
/// namespace has adopted and no value needs; returns (id, bytes) of each deleted.
pub fn delete_unused_dictionaries(conn: &Connection) -> Result<Vec<(DictionaryId, u64)>> {
    conn.execute(
        "DELETE FROM namespace_dictionaries WHERE namespace NOT IN (SELECT namespace FROM keys_v2)",
        [],
    )?;
    let mut stmt = conn.prepare(
        "DELETE FROM dictionaries WHERE id NOT IN (SELECT id FROM namespace_dictionaries)
           AND id NOT IN (SELECT dictionary FROM keys_v2 WHERE dictionary IS NOT NULL)
           AND id NOT IN (SELECT dictionary FROM objects WHERE dictionary IS NOT NULL)
         RETURNING id, length(data)",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            dictionary_column(r.get(0)?)?.unwrap_or(DictionaryId(0)),
            r.get::<_, i64>(1)?.max(0) as u64,
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
