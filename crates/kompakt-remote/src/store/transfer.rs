//! Moving objects between the cache and the server: uploads (whole or in parts), downloads
//! hashed as they arrive.

use super::*;

impl RemoteStore {
    /// Counts `stored` bytes just added to the cache, and keeps the cache within its limit.
    /// Best effort: the get or set that called it has done its work, and a cache that cannot
    /// be trimmed now (another process holding its index, say) is tried again next time.
    pub(super) fn cached(&self, stored: u64) {
        let Some(limit) = self.cache_limit else {
            return;
        };
        let mut known = self.cache_bytes.lock().unwrap_or_else(|e| e.into_inner());
        let bytes = match *known {
            Some(bytes) => Ok(bytes + stored),
            None => self.cache.info().map(|info| info.file_bytes),
        };
        *known = match bytes {
            Ok(bytes) if bytes > limit => self.cache.reduce_size(limit - limit / 4).ok().map(|r| r.file_bytes),
            Ok(bytes) => Some(bytes),
            Err(_) => None,
        };
    }

    /// Uploads the object of `record` (`record.stored_size` bytes from `source`) unless a
    /// fresh copy is there: after this, the object is younger than half the grace period, so a
    /// `gc` that began before the key record is written (it removes only objects older than
    /// the grace period when it began) leaves it. A copy older than that is written again,
    /// which renews its age.
    pub(super) fn upload_object(&self, record: KeyRecord, mut source: impl Read + Send) -> kompakt_store::Result<()> {
        let (path, size) = (self.object_path(record.hash, record.dictionary), record.stored_size);
        let mode = match self.run(self.client.head(&path))? {
            Ok(meta) if age(&meta, SystemTime::now()) < self.grace / 2 => return Ok(()),
            Ok(_) => PutMode::Overwrite,
            Err(object_store::Error::NotFound { .. }) => PutMode::Create,
            Err(e) => return self.io(Err(e)),
        };
        if size >= self.multipart_threshold {
            return self.upload_in_parts(&path, source);
        }
        let mut body = Vec::with_capacity(size as usize);
        source.read_to_end(&mut body)?;
        let opts = PutOptions {
            mode,
            ..PutOptions::default()
        };
        match self.run(self.client.put_opts(&path, PutPayload::from(body), opts))? {
            // Another writer's copy of the same content, just made.
            Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
            Err(e) => self.io(Err(e)),
        }
    }

    /// Uploads the object of `key`, and its dictionary, again if they are gone from the server.
    pub(super) fn restore_object(
        &self,
        namespace: &str,
        key: &str,
        record: KeyRecord,
        dictionary: Option<&Dictionary>,
    ) -> kompakt_store::Result<()> {
        if let Some(d) = dictionary {
            locked(&self.fresh_dictionaries).remove(&d.id());
            self.upload_dictionary(d)?;
        }
        match self.run(self.client.head(&self.object_path(record.hash, record.dictionary)))? {
            Ok(_) => Ok(()),
            Err(object_store::Error::NotFound { .. }) => {
                let object = self
                    .cache
                    .get(namespace, key)?
                    .filter(|o| o.hash == record.hash && o.dictionaries.ids().first().copied() == record.dictionary)
                    .ok_or_else(|| kompakt_store::Error::Store(format!("key {key:?} vanished from the cache")))?;
                self.upload_object(record, object.source)
            }
            Err(e) => self.io(Err(e)),
        }
    }

    /// A multipart upload of what `source` holds, [`PART_SIZE`] bytes a part, a few parts in
    /// flight: memory stays bounded whatever the size, and S3's 5 GiB limit on one PUT does not
    /// apply. The object appears whole when the upload completes, or not at all (a failed
    /// upload is aborted). Multipart uploads cannot be create-only; the content is the same
    /// whoever writes it, so a second writer's copy replacing the first changes nothing.
    pub(super) fn upload_in_parts(&self, path: &ObjectPath, mut source: impl Read + Send) -> kompakt_store::Result<()> {
        let uploaded = self.run(async {
            let mut parts = WriteMultipart::new_with_chunk_size(self.client.put_multipart(path).await?, PART_SIZE);
            loop {
                let mut part = Vec::with_capacity(PART_SIZE);
                let read = (&mut source).take(PART_SIZE as u64).read_to_end(&mut part);
                let sent = match read {
                    Ok(0) => break,
                    Ok(_) => parts.wait_for_capacity(PARTS_IN_FLIGHT).await,
                    Err(e) => {
                        let _ = parts.abort().await;
                        return Ok(Err(e));
                    }
                };
                if let Err(e) = sent {
                    let _ = parts.abort().await;
                    return Err(e);
                }
                parts.put(bytes::Bytes::from(part));
            }
            parts.finish().await.map(|_| Ok(()))
        })?;
        match uploaded {
            Ok(read) => Ok(read?),
            Err(e) => self.io(Err(e)),
        }
    }

    /// Downloads the object of `record` into the cache under `key`; `Err` naming what the
    /// server lacks (the object, or its dictionary) when it has not got it.
    pub(super) fn fetch(
        &self,
        namespace: &str,
        key: &str,
        record: KeyRecord,
    ) -> kompakt_store::Result<Result<Option<StoredObject>, String>> {
        let dictionary = match record.dictionary {
            None => None,
            Some(id) => match self.load_dictionary(id)? {
                Some(d) => Some(d),
                None => return Ok(Err(format!("dictionary {id}"))),
            },
        };
        let opts = self.cache.write_options(None);
        let mut spill = self.cache.spill(&opts);
        // Written to the cache as it arrives: the object is never whole in memory, and the
        // disk works while the network does.
        let found = self.download_checked(key, record, dictionary.clone(), |chunk| {
            io::Write::write_all(&mut spill, chunk)
        })?;
        if let Err(missing) = found {
            return Ok(Err(missing));
        }
        let pending = PendingObject::new(spill, record.hash, record.raw_size)?.with_dictionary(dictionary);
        self.cache.commit(namespace, key, pending)?;
        let found = self.cache.get(namespace, key)?;
        self.cached(record.stored_size);
        Ok(Ok(found))
    }

    /// Downloads the object `record` names, handing its bytes to `sink` as they arrive, and
    /// checks them as they arrive: decoded on a thread of their own (every block's checksum,
    /// the footer) and hashed, so an object replaced on the server by another file, even a
    /// sound kompakt file, is damage and never a key's value; the bytes are read once. `Err`
    /// naming what the server lacks when it has not got the object.
    pub(super) fn download_checked(
        &self,
        key: &str,
        record: KeyRecord,
        dictionary: Option<Dictionary>,
        mut sink: impl FnMut(&[u8]) -> io::Result<()> + Send,
    ) -> kompakt_store::Result<Result<(), String>> {
        let path = self.object_path(record.hash, record.dictionary);
        let read_opts = self.cache.read_options();
        let (fetched, sink_error, checked) = std::thread::scope(|scope| {
            // A few chunks in flight: the decoder keeps up with the network or holds it back.
            let (tx, rx) = std::sync::mpsc::sync_channel::<bytes::Bytes>(8);
            let checker = scope.spawn(move || {
                let input = ArrivingBytes {
                    chunks: rx,
                    current: bytes::Bytes::new(),
                };
                kompakt::stream::content_hash_sequential(input, &read_opts, &dictionary.into())
            });
            let deadline = crate::file::request_deadline(record.stored_size);
            let what = format!("object {}", record.hash);
            let fetched = self.run(crate::file::within(deadline, &self.url, &what, async move {
                use futures::TryStreamExt;
                let mut sink_error = None;
                let mut body = self.client.get(&path).await?.into_stream();
                while let Some(chunk) = body.try_next().await? {
                    if let Err(e) = sink(&chunk) {
                        sink_error = Some(e);
                        break;
                    }
                    if tx.send(chunk).is_err() {
                        break; // the checker has its verdict (damage): no need for the rest
                    }
                }
                Ok::<_, object_store::Error>(sink_error)
            }));
            let checked = checker
                .join()
                .unwrap_or_else(|_| Err(kompakt::Error::Internal("the download checker panicked".into())));
            match fetched {
                Ok(Ok(Ok(sink_error))) => (Ok(Ok(())), sink_error, checked),
                Ok(Ok(Err(e))) => (Ok(Err(e)), None, checked),
                Ok(Err(timed_out)) => (Err(timed_out.into()), None, checked),
                Err(e) => (Err(e), None, checked),
            }
        });
        match fetched? {
            Ok(()) => {}
            Err(object_store::Error::NotFound { .. }) => return Ok(Err(format!("object {}", record.hash))),
            Err(e) => return self.io(Err(e)),
        }
        if let Some(e) = sink_error {
            return Err(e.into());
        }
        let damaged = |detail: String| {
            Err(kompakt_store::Error::corrupt(
                "store object",
                0,
                format!("{}: object {} of key {key:?}: {detail}", self.url, record.hash),
            ))
        };
        match checked {
            Err(e) => damaged(e.to_string()),
            Ok((hash, _)) if hash != record.hash => damaged(format!(
                "its content hashes to {hash}: the server holds another file under its name"
            )),
            Ok((_, raw)) if raw != record.raw_size => damaged(format!(
                "it holds {raw} raw bytes, the key record says {}",
                record.raw_size
            )),
            Ok(_) => Ok(Ok(())),
        }
    }
}

/// The bytes of a download as they arrive, for a decoder on another thread: the end of the
/// channel (the download finished or failed) is the end of the input.
struct ArrivingBytes {
    chunks: std::sync::mpsc::Receiver<bytes::Bytes>,
    current: bytes::Bytes,
}

impl Read for ArrivingBytes {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.recv() {
                Ok(chunk) => self.current = chunk,
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}
