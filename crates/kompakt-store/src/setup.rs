//! Opening and creating a store: its configuration file, written once by the first creator.

use crate::{index, Config, Error, Result, StoreOptions, TempObject, CONFIG_FILE, INDEX_FILE};
use std::fs;
use std::io::{self, Read};
use std::path::Path;

/// A configuration larger than this is not one (and is not read into memory).
const MAX_CONFIG_LEN: u64 = 1 << 20;
/// Temporary configurations are written beside the final one under this prefix.
const CONFIG_TEMP_PREFIX: &str = ".kompakt-store.json.";

fn read_config(path: &Path) -> Result<Option<Vec<u8>>> {
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::from(io::Error::new(
                e.kind(),
                format!("{}: {e}", path.display()),
            )))
        }
    };
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_LEN + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_LEN {
        return Err(Error::Store(format!(
            "{}: over 1 MiB, not a store configuration",
            path.display()
        )));
    }
    Ok(Some(bytes))
}

pub(crate) fn open_config(root: &Path, opts: &StoreOptions) -> Result<Config> {
    let path = root.join(CONFIG_FILE);
    let config = match read_config(&path)? {
        Some(bytes) => Config::parse(&bytes, &path)?,
        None => {
            if !opts.create {
                return Err(Error::Store(format!(
                    "no kompakt store at {} (it has no {CONFIG_FILE})",
                    root.display()
                )));
            }
            create_store(root, opts)?
        }
    };
    if let Some(codec) = opts.codec {
        if codec != config.codec {
            return Err(Error::Store(format!(
                "the store at {} was created with default codec {}, and this call asks for {codec}; \
                 open it without a codec or level to use the store's, or change the default with \
                 set_default_codec (stored objects keep their own codec)",
                root.display(),
                config.codec
            )));
        }
    }
    Ok(config)
}

/// Creates a store at `root`, where no configuration was found a moment ago, and returns its
/// configuration.
pub(crate) fn create_store(root: &Path, opts: &StoreOptions) -> Result<Config> {
    match check_creatable(root) {
        Ok(()) => {
            fs::create_dir_all(root)?;
            // The index first: the configuration makes the store visible, so it comes last.
            drop(index::open(root, true, opts.durable)?);
            create_config(root, &Config::new(opts.codec.unwrap_or_default()))
        }
        // Another creator may have finished the store (and started filling it) since the
        // configuration was looked for: then the folder is that store.
        Err(not_creatable) => {
            let path = root.join(CONFIG_FILE);
            match read_config(&path)? {
                Some(bytes) => Config::parse(&bytes, &path),
                None => Err(not_creatable),
            }
        }
    }
}

/// A store is created only in a missing or empty folder, or one holding what another
/// creator of the same store (alive or dead) leaves before the configuration exists.
fn check_creatable(root: &Path) -> Result<()> {
    let Ok(entries) = fs::read_dir(root) else {
        return Ok(()); // missing: created next
    };
    for entry in entries {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        let ours = name.starts_with(INDEX_FILE) || (name.starts_with(CONFIG_TEMP_PREFIX) && name.ends_with(".tmp"));
        if !ours {
            return Err(Error::Store(format!(
                "{} is a folder that is not empty and not a kompakt store (it holds {name:?}): \
                 choose a new or empty folder",
                root.display()
            )));
        }
    }
    Ok(())
}

/// Writes the configuration of a new store; if another process created the store at the same
/// moment, its configuration wins and is returned.
fn create_config(root: &Path, config: &Config) -> Result<Config> {
    let target = root.join(CONFIG_FILE);
    let mut temp = TempObject::create_prefixed(root, CONFIG_TEMP_PREFIX)?;
    io::Write::write_all(&mut temp, &config.to_json())?;
    temp.sync()?;
    // A hard link fails if the target exists, unlike rename: the first creator wins.
    match temp.link_to(&target) {
        Ok(()) => Ok(config.clone()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let bytes = read_config(&target)?.ok_or_else(|| Error::Store(format!("{} vanished", target.display())))?;
            Config::parse(&bytes, &target)
        }
        Err(e) => Err(e.into()),
    }
}
