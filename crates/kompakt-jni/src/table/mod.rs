//! Tables: `KompaktTable` (reading, planning, filtered reads), `KompaktTableWriter` and
//! `TableWriteOptions`, with Arrow data passed through the C data interface ([`ffi`]) and the
//! portable types Java consumers take ([`portable`]).

mod ffi;
mod portable;
mod read;
mod write;
