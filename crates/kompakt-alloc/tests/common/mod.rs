//! What the kernel says about the mapping that holds an address (Linux `/proc/self/smaps`).
// Each test binary uses some of these.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout};

/// The lines `/proc/self/smaps` gives about the mapping holding `addr` (after its header).
fn mapping_of(addr: usize) -> Vec<String> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
    let mut inside = false;
    let mut lines = Vec::new();
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((start, end)) = first.split_once('-') {
            if let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) {
                if inside {
                    return lines;
                }
                inside = (start..end).contains(&addr);
                continue;
            }
        }
        if inside {
            lines.push(line.to_owned());
        }
    }
    assert!(inside, "no mapping holds {addr:#x}");
    lines
}

/// The `VmFlags` of the mapping holding `addr`, e.g. `["rd", "wr", "mr", "hg"]` (`hg`: the
/// mapping is advised for huge pages).
pub fn vm_flags(addr: usize) -> Vec<String> {
    let lines = mapping_of(addr);
    let flags = lines.iter().find_map(|l| l.strip_prefix("VmFlags:"));
    flags
        .expect("a VmFlags line")
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// KiB of the mapping holding `addr` that are resident (its `Rss`).
pub fn resident_kib(addr: usize) -> u64 {
    let lines = mapping_of(addr);
    let rss = lines.iter().find_map(|l| l.strip_prefix("Rss:")).expect("an Rss line");
    rss.trim().trim_end_matches("kB").trim().parse().expect("Rss in kB")
}

/// Allocates `kib` KiB through `allocator`, touches every page, frees it and returns how many
/// KiB of the mapping that held it are still resident.
pub fn resident_kib_after_free(allocator: &impl GlobalAlloc, kib: u64) -> u64 {
    let layout = Layout::from_size_align(kib as usize * 1024, 4096).unwrap();
    // SAFETY: a valid non-zero layout; the block is written within its size and freed once,
    // with the layout it was made with; only its address is used after that.
    unsafe {
        let p = allocator.alloc(layout);
        assert!(!p.is_null());
        p.write_bytes(1, layout.size());
        allocator.dealloc(p, layout);
        resident_kib(p as usize)
    }
}

/// Allocates and touches 8 MiB through `allocator`, returns its mapping's flags and frees it.
pub fn flags_of_a_large_block(allocator: &impl GlobalAlloc) -> Vec<String> {
    let layout = Layout::from_size_align(8 << 20, 4096).unwrap();
    // SAFETY: a valid non-zero layout; the block is written within its size and freed once,
    // with the layout it was made with.
    unsafe {
        let p = allocator.alloc(layout);
        assert!(!p.is_null());
        p.write_bytes(1, layout.size());
        let flags = vm_flags(p as usize);
        allocator.dealloc(p, layout);
        flags
    }
}
