//! Table files through the C API: columns cross as Arrow's C data interface (`ArrowSchema`,
//! `ArrowArray`), the ABI every Arrow implementation shares; fixed-width columns may also be
//! decoded straight into the caller's memory (`kpk_table_read_into`).
//!
//! [`write`] takes a record batch into a new file or an append; [`read`] opens a table and
//! reads rows of it, by range or by number; [`filter`] reads the rows that pass filters.

mod filter;
mod read;
mod write;

pub use filter::*;
pub use read::*;
pub use write::*;

#[cfg(test)]
mod tests;
