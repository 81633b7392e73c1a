//! The front door's table of bad options (`crates/kompakt-api/tests/bad_options.tsv`) through
//! every C entry point that takes options: each row gives the status of its kind (found by
//! `kpk_status_name`) and a message that contains the row's.

use super::*;
use crate::table::kpk_table_options;
use arrow_array::ffi::to_ffi;
use arrow_array::{Array, ArrayRef, Int32Array, RecordBatch, StructArray};
use kompakt_api::testing::{bad_options, BadOption};
use std::ffi::c_char;
use std::path::Path;
use std::ptr::null;
use std::sync::Arc;

/// The status whose name is `kind`.
fn status_named(kind: &str) -> kpk_status {
    (KPK_OK..=KPK_ERROR_LIMIT + 10)
        .find(|&s| {
            // SAFETY: kpk_status_name returns a static NUL-terminated string.
            unsafe { CStr::from_ptr(kpk_status_name(s)) }.to_str() == Ok(kind)
        })
        .unwrap_or_else(|| panic!("no status is named {kind:?}"))
}

/// One row's options as C values, and the checks of what each door says.
struct Row<'a> {
    case: &'a BadOption,
    status: kpk_status,
    codec: Option<CString>,
    filter: Option<CString>,
}

impl Row<'_> {
    fn int(&self, name: &str) -> Option<i64> {
        self.case.get(name).map(|v| v.parse().expect("a number"))
    }

    fn ptr(s: &Option<CString>) -> *const c_char {
        s.as_ref().map_or(null(), |s| s.as_ptr())
    }

    /// The row as `kpk_write_options`, unless one of its values means "the default" there
    /// (typesize 0) or does not fit.
    fn write_options(&self) -> Option<kpk_write_options> {
        let level = match self.int("level") {
            None => KPK_LEVEL_DEFAULT,
            Some(0) => KPK_LEVEL_NONE,
            Some(l) => i32::try_from(l).ok()?,
        };
        let typesize = match self.int("typesize") {
            Some(0) => return None,
            t => u32::try_from(t.unwrap_or(0)).ok()?,
        };
        Some(kpk_write_options {
            size: std::mem::size_of::<kpk_write_options>() as u32,
            codec: Self::ptr(&self.codec),
            level,
            threads: i32::try_from(self.int("threads").unwrap_or(0)).ok()?,
            typesize,
            filter: Self::ptr(&self.filter),
            block_size: self.int("block_size").unwrap_or(0),
            sync: std::ptr::null(),
        })
    }

    /// Whether the row sets only what a codec, a level and threads say (what stores and
    /// tables take).
    fn codec_level_threads_only(&self) -> bool {
        let options = &self.case.options;
        options
            .iter()
            .all(|(k, _)| ["codec", "level", "threads"].contains(&k.as_str()))
    }

    fn check(&self, door: &str, status: kpk_status, name: Option<&Path>) {
        let (case, message) = (&self.case.case, last_error());
        assert_eq!(status, self.status, "{case}, through {door}: {message}");
        assert!(
            message.contains(&self.case.message),
            "{case}, through {door}: the message\n  {message}\ndoes not contain\n  {}",
            self.case.message
        );
        if let Some(path) = name {
            let path = path.to_str().unwrap();
            assert!(
                message.contains(path),
                "{case}, through {door}: {message} names no {path}"
            );
        }
    }
}

fn one_row_table() -> (FFI_ArrowSchema, FFI_ArrowArray) {
    let column: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
    let batch = RecordBatch::try_from_iter([("x", column)]).unwrap();
    let (array, schema) = to_ffi(&StructArray::from(batch).to_data()).unwrap();
    (schema, array)
}

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};

#[test]
fn every_bad_option_gives_its_status_and_message_through_every_door() {
    let dir = tempfile::tempdir().unwrap();
    let cases = bad_options();
    assert!(cases.len() >= 10);
    for (i, case) in cases.iter().enumerate() {
        let row = Row {
            case,
            status: status_named(&case.kind),
            codec: case.get("codec").map(c),
            filter: case.get("filter").map(c),
        };
        let mut doors = 0;
        // SAFETY: every pointer is a live local or NULL; handles are closed once.
        unsafe {
            if let Some(opts) = row.write_options() {
                let mut w = null_mut();
                row.check("kpk_writer_open_memory", kpk_writer_open_memory(&opts, &mut w), None);
                assert!(w.is_null());
                let path = dir.path().join(format!("row{i}.kpk"));
                let cpath = c(path.to_str().unwrap());
                let status = kpk_writer_open_file(cpath.as_ptr(), &opts, &mut w);
                row.check("kpk_writer_open_file", status, Some(&path));
                assert!(!path.exists(), "{}: nothing is written", case.case);
                doors += 2;
                if row.codec_level_threads_only() {
                    let folder = dir.path().join(format!("store{i}"));
                    let cfolder = c(folder.to_str().unwrap());
                    let mut store = null_mut();
                    let status = kpk_store_open(cfolder.as_ptr(), &opts, &mut store);
                    row.check("kpk_store_open", status, Some(&folder));
                    assert!(store.is_null() && !folder.exists(), "{}: no store is made", case.case);
                    let table = kpk_table_options {
                        codec: opts.codec,
                        level: opts.level,
                        threads: opts.threads,
                        ..<kpk_table_options as crate::options::SizedStruct>::zeroed()
                    };
                    let (mut schema, mut array) = one_row_table();
                    let status = kpk_table_write(cpath.as_ptr(), &mut schema, &mut array, &table);
                    row.check("kpk_table_write", status, Some(&path));
                    doors += 2;
                }
            }
            if case.get("typesize").is_some() || case.get("filter").is_some() {
                let typesize = u32::try_from(row.int("typesize").unwrap_or(1)).unwrap();
                let mut w = null_mut();
                assert_eq!(kpk_writer_open_memory(null(), &mut w), KPK_OK);
                let mut s = u32::MAX;
                let status = kpk_writer_add_stream_typed(w, typesize, Row::ptr(&row.filter), &mut s);
                row.check("kpk_writer_add_stream_typed", status, None);
                kpk_writer_abort(w);

                let folder = c(dir.path().join("store").to_str().unwrap());
                let mut store = null_mut();
                assert_eq!(kpk_store_open(folder.as_ptr(), null(), &mut store), KPK_OK);
                let (ns, key) = (c("objects"), c("k"));
                let status = kpk_store_put(
                    store,
                    ns.as_ptr(),
                    key.as_ptr(),
                    b"value".as_ptr().cast(),
                    5,
                    typesize,
                    Row::ptr(&row.filter),
                    null(),
                    0,
                    null_mut(),
                );
                row.check("kpk_store_put", status, None);
                kpk_store_close(store);
                doors += 2;
            }
        }
        assert!(doors > 0, "{}: no C entry point takes these options", case.case);
    }
}
