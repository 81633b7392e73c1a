//! The object store: a content-addressed store in a folder (the same folders as Python's
//! `kompakt.Store` and `kompakt store`), or on object storage at an `s3://` URL with its local
//! cache.

use crate::ffi::{bytes, kpk_strings, location_arg, put, put_optional, required, text};
use crate::options::{kpk_write_options, level_arg, read_sized, typed_stream};
use crate::reader::{kpk_reader, open_reader};
use crate::status::{about, guard, kpk_status, Failure};
use crate::writer::{kpk_writer, Output};
use kompakt::stream::ReadAt;
use kompakt_remote::Location;
use kompakt_store::ContentStore;
use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

/// A store open for use, by any number of threads at once.
pub struct kpk_store {
    store: Box<dyn ContentStore>,
}

fn store_ref<'a>(s: *const kpk_store) -> Result<&'a kpk_store, Failure> {
    // SAFETY: a non-NULL handle came from kpk_store_open and is not closed yet; a store is
    // shared between threads by design (its index serializes writers).
    unsafe { s.as_ref() }.ok_or_else(|| Failure::usage("the store is NULL"))
}

/// A namespace and a key, both required.
fn ns_key<'a>(namespace: *const c_char, key: *const c_char) -> Result<(&'a str, &'a str), Failure> {
    Ok((required(namespace, "namespace")?, required(key, "key")?))
}

/// Opens (creating when missing) a store. `opts`: its codec and level (for a new store, the
/// codec it records; an existing one must have been made with the same), and threads; a
/// store's values take its own block size, element size and filter, so those stay 0.
///
/// # Safety
/// `path` is a NUL-terminated string; `opts` NULL or a readable `kpk_write_options` of the
/// size its `size` field says; `out` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_open(
    path: *const c_char,
    opts: *const kpk_write_options,
    out: *mut *mut kpk_store,
) -> kpk_status {
    guard(|| {
        open_store(path, out, |name| {
            let o = read_sized(opts).map_err(about(name))?;
            for (field, given) in [
                ("block_size", o.block_size != 0),
                ("typesize", o.typesize != 0),
                ("filter", !o.filter.is_null()),
            ] {
                if given {
                    return Err(Failure::option(format!(
                        "{field} is not an option of a store (its values take the store's; a value's element \
                         size and filter go to kpk_store_put or kpk_writer_add_stream_typed): leave it 0"
                    )))
                    .map_err(about(name));
                }
            }
            Ok(kompakt_api::store::StoreArgs {
                codec: text(o.codec, "codec").map_err(about(name))?,
                level: level_arg(o.level).map_err(about(name))?,
                threads: Some(i64::from(o.threads)),
                ..Default::default()
            })
        })
    })
}

/// Opens the store at `path` with the arguments `args` makes (given the name errors take),
/// into `out`.
fn open_store<'a>(
    path: *const c_char,
    out: *mut *mut kpk_store,
    args: impl FnOnce(&Option<String>) -> Result<kompakt_api::store::StoreArgs<'a>, Failure>,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::usage("the output pointer for the store is NULL"));
    }
    let location = location_arg(path)?;
    let name = match &location {
        // A remote store's errors name its URL already.
        Location::Local(path) => Some(path.display().to_string()),
        Location::Remote(_) => None,
    };
    let args = args(&name)?;
    let store = kompakt_api::store::open(&location, &args).map_err(about(&name))?;
    put(out, Box::into_raw(Box::new(kpk_store { store })))
}

/// How a store is opened (`kpk_store_options` in the header); zero is every default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct kpk_store_options {
    /// `sizeof(kpk_store_options)` as the caller's header has it, or 0 for the first version.
    pub size: u32,
    /// As in `kpk_write_options`: 0 the default (a new store's, or the one it recorded).
    pub level: i32,
    /// Threads for large values; 0: all cores.
    pub threads: i32,
    /// Nonzero: fsync every index commit.
    pub durable: i32,
    /// Nonzero: fail when the location holds no store (default: create one).
    pub must_exist: i32,
    /// A codec spec; NULL: the default.
    pub codec: *const c_char,
    /// Object storage only: the local cache folder; NULL: one per URL under the user's cache.
    pub cache_dir: *const c_char,
    /// Object storage only: bytes the cache's objects may hold; 0: 10 GiB; `INFINITY`: no
    /// limit.
    pub cache_limit: f64,
    /// Object storage only: seconds an unreferenced object is kept before `gc` removes it;
    /// 0: an hour; `-INFINITY`: not at all (0 cannot say it: it is the default).
    pub grace_seconds: f64,
    /// Object storage only: objects of at least this many bytes are uploaded in parts; 0: 128 MiB.
    pub multipart_threshold: i64,
}

impl crate::options::SizedStruct for kpk_store_options {
    const NAME: &'static str = "kpk_store_options";
    const SIZES: &'static [usize] = &[std::mem::size_of::<kpk_store_options>()];

    fn zeroed() -> Self {
        kpk_store_options {
            size: 0,
            level: 0,
            threads: 0,
            durable: 0,
            must_exist: 0,
            codec: std::ptr::null(),
            cache_dir: std::ptr::null(),
            cache_limit: 0.0,
            grace_seconds: 0.0,
            multipart_threshold: 0,
        }
    }
}

/// The front door's arguments from the caller's struct: C's zeros are "not given"; a grace of
/// `-INFINITY` is none, the value a zero cannot say.
fn store_args<'a>(o: &kpk_store_options) -> Result<kompakt_api::store::StoreArgs<'a>, Failure> {
    let given = |value: f64| (value != 0.0).then_some(value);
    Ok(kompakt_api::store::StoreArgs {
        codec: text(o.codec, "codec")?,
        level: level_arg(o.level)?,
        threads: Some(i64::from(o.threads)),
        create: Some(o.must_exist == 0),
        durable: o.durable != 0,
        cache_dir: text(o.cache_dir, "cache_dir")?.map(std::path::PathBuf::from),
        cache_limit: given(o.cache_limit),
        grace_seconds: given(o.grace_seconds).map(|g| if g == f64::NEG_INFINITY { 0.0 } else { g }),
        multipart_threshold: (o.multipart_threshold != 0).then_some(o.multipart_threshold),
        ..Default::default()
    })
}

/// Opens a store (a folder, or an `s3://` URL) with every option of `kpk_store_options`;
/// options of stores on object storage given for a folder are `KPK_ERROR_OPTION`.
///
/// # Safety
/// `path` is a NUL-terminated string; `opts` NULL or a readable `kpk_store_options` of the
/// size its `size` field says; `out` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_open_with(
    path: *const c_char,
    opts: *const kpk_store_options,
    out: *mut *mut kpk_store,
) -> kpk_status {
    guard(|| {
        open_store(path, out, |name| {
            read_sized(opts).and_then(|o| store_args(&o)).map_err(about(name))
        })
    })
}

/// Closes a store.
///
/// # Safety
/// `store` is NULL or a live handle, freed by this call.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_close(store: *mut kpk_store) {
    if store.is_null() {
        return;
    }
    let _ = guard(|| {
        // SAFETY: a live handle, freed here once (the header's contract).
        drop(unsafe { Box::from_raw(store) });
        Ok(())
    });
}

/// A writer for a new value of the store, completed by `kpk_store_commit`.
///
/// # Safety
/// `store` is a live handle; `out` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_writer(store: *const kpk_store, out: *mut *mut kpk_writer) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        if out.is_null() {
            return Err(Failure::usage("the output pointer for the writer is NULL"));
        }
        let opts = s.store.local().write_options(None);
        let spill = s.store.local().spill(&opts);
        let mut writer = kompakt_fs::writer(Output::Store(spill), opts, None)?;
        writer.hash_content()?;
        let w = kpk_writer {
            writer,
            opts,
            path: None,
            in_memory: false,
        };
        put(out, Box::into_raw(Box::new(w)))
    })
}

/// Completes a store writer's value and points `key` at it; frees the writer.
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `writer` a live
/// handle from `kpk_store_writer` (freed by this call); `hash` NULL or room for 33 bytes.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_commit(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    writer: *mut kpk_writer,
    hash: *mut c_char,
) -> kpk_status {
    guard(|| {
        if writer.is_null() {
            return Err(Failure::usage("the writer is NULL"));
        }
        // SAFETY: a live handle, freed here once (the header's contract).
        let w = unsafe { Box::from_raw(writer) };
        let s = store_ref(store)?;
        let (namespace, key) = ns_key(namespace, key)?;
        let raw = w.writer.bytes_in();
        let (output, content) = w.writer.finish_hashed()?;
        let (Output::Store(spill), Some(content)) = (output, content) else {
            return Err(Failure::usage("kpk_store_commit takes a writer from kpk_store_writer"));
        };
        let pending = kompakt_store::PendingObject::new(spill, content, raw)?;
        let committed = pending.hash();
        s.store.commit_many(namespace, vec![(key.to_owned(), pending)])?;
        write_hash(hash, committed);
        Ok(())
    })
}

/// Stores `len` bytes at `data` as a one-stream value under `key`, with `metadata`, in one
/// call. A small value (at most 64 KiB) of a local store with a zstd codec is compressed with
/// the namespace's dictionary, or offered to the sample the store trains one from (which a
/// writer from `kpk_store_writer` never is).
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `data` holds `len`
/// readable bytes and `metadata` `metadata_len` (either may be NULL when its length is 0);
/// `filter` NULL or a NUL-terminated string; `hash` NULL or room for 33 bytes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kpk_store_put(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    data: *const c_void,
    len: usize,
    typesize: u32,
    filter: *const c_char,
    metadata: *const c_void,
    metadata_len: usize,
    hash: *mut c_char,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let (namespace, key) = ns_key(namespace, key)?;
        let (data, metadata) = (bytes(data, len)?, bytes(metadata, metadata_len)?);
        let opts = s.store.local().write_options(None);
        let stream = typed_stream(opts.stream_options(), typesize, filter)?;
        let pending = s.store.prepare_for(namespace, &[(data, stream)], metadata, opts)?;
        let committed = pending.hash();
        s.store.commit_many(namespace, vec![(key.to_owned(), pending)])?;
        write_hash(hash, committed);
        Ok(())
    })
}

/// Copies a content hash (32 hex digits and a NUL) to `hash` unless it is NULL.
fn write_hash(hash: *mut c_char, committed: kompakt::stream::ContentHash) {
    if !hash.is_null() {
        let hex = CString::new(committed.to_string()).unwrap_or_default();
        let bytes = hex.as_bytes_with_nul();
        // SAFETY: the caller passes room for 33 bytes (the header's contract); a content
        // hash is 32 hex digits and the NUL.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), hash, bytes.len().min(33)) };
    }
}

/// Opens the value under `key` for reading; `*out` is NULL when the key does not exist.
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `out` a writable
/// pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_get(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    out: *mut *mut kpk_reader,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let (namespace, key) = ns_key(namespace, key)?;
        let Some(object) = s.store.get(namespace, key)? else {
            return put(out, std::ptr::null_mut());
        };
        let source: Arc<dyn ReadAt> = match object.source {
            kompakt_store::ObjectSource::File(f) => Arc::new(f),
            kompakt_store::ObjectSource::Memory(m) => Arc::new(m.into_inner()),
        };
        let threads = i32::try_from(s.store.local().read_options().threads).unwrap_or(0);
        open_reader(source, None, threads, object.dictionaries, out)
    })
}

/// Whether `key` exists (`*exists` 1 or 0).
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `exists` a
/// writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_exists(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    exists: *mut i32,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let (namespace, key) = ns_key(namespace, key)?;
        put(exists, i32::from(s.store.exists(namespace, key)?))
    })
}

/// Deletes `key` (`*deleted` 1 if it existed, else 0).
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `deleted` NULL or
/// a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_delete(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    deleted: *mut i32,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let (namespace, key) = ns_key(namespace, key)?;
        let gone = s.store.delete(namespace, key)?;
        put_optional(deleted, i32::from(gone))
    })
}

/// The keys of a namespace, sorted, as a list the caller frees with `kpk_strings_free`.
///
/// # Safety
/// `store` is a live handle; `namespace` a NUL-terminated string; `keys` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_keys(
    store: *const kpk_store,
    namespace: *const c_char,
    keys: *mut kpk_strings,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let namespace = required(namespace, "namespace")?;
        if keys.is_null() {
            return Err(Failure::usage("the output pointer for the keys is NULL"));
        }
        let mut list = s.store.keys(namespace)?;
        list.sort();
        put(keys, kpk_strings::from_vec(list))
    })
}

/// The namespaces that hold keys, sorted, as a list the caller frees with `kpk_strings_free`.
///
/// # Safety
/// `store` is a live handle; `namespaces` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_namespaces(store: *const kpk_store, namespaces: *mut kpk_strings) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        if namespaces.is_null() {
            return Err(Failure::usage("the output pointer for the namespaces is NULL"));
        }
        let mut list: Vec<String> = s.store.namespaces()?.into_iter().map(|(n, _)| n).collect();
        list.sort();
        put(namespaces, kpk_strings::from_vec(list))
    })
}

/// Deletes every key of namespace `ns` (NULL: of every namespace); `*removed` (may be NULL)
/// gets how many. The values stay until `kpk_store_gc`.
///
/// # Safety
/// `store` is a live handle; `ns` NULL or a NUL-terminated string; `removed` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_clear(store: *const kpk_store, ns: *const c_char, removed: *mut u64) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let namespace = text(ns, "namespace")?;
        let n = s.store.clear(namespace)?;
        put_optional(removed, n)
    })
}

/// Removes the values no key points at (on object storage: those older than the grace period,
/// so a value another machine is committing stays); `*objects` and `*bytes` (may be NULL) get
/// what was removed.
///
/// # Safety
/// `store` is a live handle; `objects` and `bytes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_gc(store: *const kpk_store, objects: *mut u64, bytes: *mut u64) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let report = s.store.gc()?;
        put_optional(objects, report.objects)?;
        put_optional(bytes, report.bytes)
    })
}
