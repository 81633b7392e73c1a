//! What the kernel says about the mapping that holds an address (Linux `/proc/self/smaps`).

use std::alloc::{GlobalAlloc, Layout};

/// The `VmFlags` of the mapping holding `addr`, e.g. `["rd", "wr", "mr", "hg"]` (`hg`: the
/// mapping is advised for huge pages).
pub fn vm_flags(addr: usize) -> Vec<String> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((start, end)) = first.split_once('-') {
            if let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) {
                inside = (start..end).contains(&addr);
                continue;
            }
        }
        if inside {
            if let Some(flags) = line.strip_prefix("VmFlags:") {
                return flags.split_whitespace().map(str::to_owned).collect();
            }
        }
    }
    panic!("no mapping holds {addr:#x}");
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
