//! Appending rows to a table file in place, crash-safe through a journal
//! (docs/FORMAT.md, "Appending").
//!
//! An append cuts the file's footer and trailer off, writes new pages after the last block and
//! a new footer that indexes old and new pages. Before it cuts anything it saves the old footer
//! and trailer in `<file>.kompakt-journal` (fsynced) and holds a lock on that journal; it
//! deletes the journal only once the new file is on disk. A journal that outlives its append
//! (a crash, a power failure) means the append did not finish: the next open puts the old
//! footer back, so the table is exactly what it was before the append.

use crate::journal::{journal_path, lock_journal, restore, sync_parent, JOURNAL_MAGIC};
use crate::sort::SortCheck;
use crate::stats::group_stats;
use crate::writer::Resume;
use crate::{TableOptions, TableReader, TableWriter};
use arrow_array::RecordBatch;
use arrow_schema::DataType;
use kompakt::hash::xxh3_64;
use kompakt::Result;
use kompakt_fs::WritebackFile;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Appends `batches` (with the table's column types) to the table file at `path`, without
/// rewriting it. Returns the rows appended. The table's rows per group is kept; the codec and
/// threads come from `opts`, and `opts.metadata` is merged into the table's.
///
/// A crash or an error during the append leaves the table as it was before (restored on the
/// next open); a partial last row group is written again with the new rows.
pub fn append_table_file(
    path: impl AsRef<Path>,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    opts: TableOptions,
) -> Result<u64> {
    let path = path.as_ref();
    let mut journal = lock_journal(path)?;
    if journal.metadata()?.len() > 0 {
        restore(path, &mut journal)?;
        journal = lock_journal(path)?;
    }
    let result = append_locked(path, &mut journal, batches, opts);
    match result {
        Ok(rows) => {
            std::fs::remove_file(journal_path(path))?;
            sync_parent(path)?;
            Ok(rows)
        }
        Err(e) => {
            // Put the old footer back now rather than at the next open.
            let _ = restore(path, &mut journal);
            Err(e)
        }
    }
}

/// The journal an append to `old` (the table at `path`) writes before touching it: the offset
/// where the footer starts and the footer and trailer bytes, checksummed.
fn journal_record(path: &Path, old: &TableReader) -> Result<(u64, Vec<u8>)> {
    let (_, blocks) = old.stream_index();
    let cut = blocks
        .last()
        .map_or(kompakt::stream::format::FILE_HEADER_LEN as u64, |b| b.end_offset());
    let mut tail = vec![0u8; (old.file_len() - cut) as usize];
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(cut))?;
    f.read_exact(&mut tail)?;
    let mut record = Vec::with_capacity(32 + tail.len());
    record.extend_from_slice(&JOURNAL_MAGIC);
    record.extend_from_slice(&cut.to_le_bytes());
    record.extend_from_slice(&(tail.len() as u64).to_le_bytes());
    record.extend_from_slice(&tail);
    record.extend_from_slice(&xxh3_64(&record).to_le_bytes());
    Ok((cut, record))
}

/// The journal an append to the table at `path` would write first (for crash tests).
#[doc(hidden)]
pub fn append_journal_for_tests(path: impl AsRef<Path>) -> Result<Vec<u8>> {
    let path = path.as_ref();
    journal_record(path, &TableReader::open_unrecovered(path)?).map(|(_, r)| r)
}

fn append_locked(
    path: &Path,
    journal: &mut File,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    opts: TableOptions,
) -> Result<u64> {
    let old = TableReader::open_unrecovered(path)?;
    let (cut, record) = journal_record(path, &old)?;
    journal.set_len(0)?;
    journal.seek(SeekFrom::Start(0))?;
    journal.write_all(&record)?;
    journal.sync_all()?;
    sync_parent(path)?;

    // 2. The rows of a partial last group are written again, with the new ones.
    let r = u64::from(old.rows_per_group());
    let keep_groups = (old.num_rows() / r) as usize;
    let (_, redo) = old.read(None, keep_groups as u64 * r..old.num_rows(), opts.threads)?;

    // 3. Cut the footer off and continue the file.
    let mut file = OpenOptions::new().write(true).open(path)?;
    file.set_len(cut)?;
    file.seek(SeekFrom::Start(cut))?;
    let mut file = WritebackFile::new(file);
    let mut w = TableWriter::resume(&mut file, resume_point(&old, keep_groups)?, opts)?;
    let before = w.rows_written();
    for b in redo {
        w.write(&b)?;
    }
    let redone = w.rows_written() - before;
    for b in batches {
        w.write(&b?)?;
    }
    let appended = w.rows_written() - before - redone;
    w.finish()?;
    file.sync_all()?;
    Ok(appended)
}

/// What the writer needs to continue `old` after its first `keep_groups` row groups.
fn resume_point(old: &TableReader, keep_groups: usize) -> Result<Resume> {
    let schema = old.schema();
    let sorted_by = old.sorted_by().to_vec();
    let kept_rows = (keep_groups as u64 * u64::from(old.rows_per_group())).min(old.num_rows());
    let last_sort_row = if !sorted_by.is_empty() && kept_rows > 0 {
        let sort_columns = SortCheck::new(&schema, &sorted_by)?.columns();
        let (_, last) = old.read(Some(&sort_columns), kept_rows - 1..kept_rows, 1)?;
        let row = last
            .first()
            .ok_or_else(|| kompakt::Error::corrupt("table", 0, "the last row of the table could not be read"))?;
        Some(row.columns().to_vec())
    } else {
        None
    };
    let mut dictionaries = Vec::with_capacity(schema.fields().len());
    for (c, f) in schema.fields().iter().enumerate() {
        dictionaries.push(match f.data_type() {
            DataType::Dictionary(..) => Some(old.dictionary(c)?),
            _ if old.layouts()[c].dictionary_stream.is_some() => Some(old.dictionary(c)?),
            _ => None,
        });
    }
    // Kept only if every column has them: the append cannot know the old groups' otherwise.
    let statistics = match old.statistics_location() {
        Some(at) => {
            let columns = (0..schema.fields().len())
                .map(|c| old.statistics(c))
                .collect::<Result<Vec<_>>>()?;
            columns
                .into_iter()
                .map(|s| s.map(|s| (0..keep_groups).map(|g| group_stats(&s, g)).collect()))
                .collect::<Option<Vec<Vec<_>>>>()
                .map(|kept| (at.stream, kept))
        }
        None => None,
    };
    let (streams, blocks) = old.stream_index();
    Ok(Resume {
        rows_per_group: old.rows_per_group(),
        user_metadata: old.user_metadata_map(),
        sorted_by,
        kept_rows,
        last_sort_row,
        streams: streams.to_vec(),
        blocks: blocks.to_vec(),
        layouts: old.layouts().to_vec(),
        layout: old.layout(),
        dictionaries,
        pages: old.pages().iter().map(|p| p[..keep_groups].to_vec()).collect(),
        statistics,
        schema,
    })
}
