package dev.kompakt;

import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * The native calls of kompakt's JNI library (crates/kompakt-jni), one per Rust entry point. Not
 * public: the API is {@link Kompakt}, the streams, {@link KompaktFile} and {@link Dictionary}.
 *
 * <p>Conventions. A {@code long} handle is a pointer to a Rust object; 0 is never a live handle.
 * Write options and dictionaries are read-only and may be used by many threads at once; writers,
 * readers and files are used by one thread at a time (callers synchronize). Every handle is
 * freed exactly once, never while a call uses it. Every
 * call checks its arguments (ranges inside arrays, direct buffers, handles not 0) and reports any
 * failure as an exception of the class of its kind (see {@link ErrorKind}); none crashes the JVM
 * on bad input. Numbers "not given" are {@link #NOT_GIVEN}.
 */
final class Native {
    /** An option left at its default. */
    static final long NOT_GIVEN = Long.MIN_VALUE;

    static {
        NativeLibrary.load();
    }

    private Native() {}

    /** The library's version, e.g. "0.1.0". */
    static native String version();

    // --- write options ---------------------------------------------------------------------

    /**
     * Validates options through the front door (kompakt-api) and returns a handle to them; throws
     * {@link InvalidOptionException} naming the valid values. {@code codec} and {@code filter}
     * may be null; numbers may be {@link #NOT_GIVEN}; {@code dictionary} is 0 or a dictionary
     * handle (kept alive by the options until {@link #optionsFree}).
     */
    static native long optionsNew(
            String codec, long level, long threads, long blockSize, String filter, long typesize, long dictionary);

    /** The options as a spec string, for messages and logs (e.g. "zstd:3, 1 MiB blocks"). */
    static native String optionsDescribe(long options);

    /** The block size the options resolve to (0: the defaults'). */
    static native int optionsBlockSize(long options);

    /** The thread count the options resolve to, 0 for all cores (0: the defaults'). */
    static native int optionsThreads(long options);

    /**
     * Raw bytes an output stream hands {@link #writerWrite} at a time: a block, or with more
     * than one thread the blocks the writer compresses at once (whole blocks within 64 MiB).
     */
    static native int optionsStreamBuffer(long options);

    static native void optionsFree(long options);

    // --- dictionaries ----------------------------------------------------------------------

    /** Trains a zstd dictionary of at most {@code maxSize} bytes on the samples. */
    static native long dictionaryTrain(byte[][] samples, int maxSize);

    /** A dictionary from its bytes (a .kpkd file's content, as Python and R save them). */
    static native long dictionaryLoad(byte[] bytes, int offset, int length);

    static native byte[] dictionaryBytes(long dictionary);

    /** Its id, as the error for a missing dictionary names it. */
    static native String dictionaryId(long dictionary);

    static native void dictionaryFree(long dictionary);

    // --- one-shot --------------------------------------------------------------------------

    /** A complete single-stream kompakt file holding {@code src[offset, offset+length)}. */
    static native byte[] compress(byte[] src, int offset, int length, long options);

    /**
     * Compresses a direct buffer's bytes into another direct buffer; returns the bytes written,
     * or throws {@link LimitExceededException} if {@code dstLength} is too small (at most
     * {@link #compressBound} is ever needed).
     */
    static native int compressDirect(
            ByteBuffer src, int srcPos, int srcLength, ByteBuffer dst, int dstPos, int dstLength, long options);

    /** The most bytes {@code compress} can produce for {@code length} input bytes. */
    static native long compressBound(long length, long options);

    /** The decoded length of a single-stream file (checked: the file's own index). */
    static native long decompressedLength(byte[] src, int offset, int length);

    static native long decompressedLengthDirect(ByteBuffer src, int pos, int length);

    /**
     * Decodes a single-stream file ({@code threads}: 0 for all cores, up to 256, as in every read
     * below). {@code dictionaries}: null or dictionary handles. Throws
     * {@link LimitExceededException} if it decodes to more than {@code maxLength} bytes.
     */
    static native byte[] decompress(byte[] src, int offset, int length, long threads, long maxLength, long[] dictionaries);

    /** Decodes into a direct buffer; returns the bytes written (the throw is as above). */
    static native int decompressDirect(
            ByteBuffer src, int srcPos, int srcLength, ByteBuffer dst, int dstPos, int dstLength, long threads,
            long[] dictionaries);

    // --- writing a stream ------------------------------------------------------------------

    /** A writer of one stream whose file is built in memory and taken out by {@link #writerDrain}. */
    static native long writerOpen(long options);

    /**
     * A writer to a file, written atomically (a temporary file beside it, renamed into place by
     * {@link #writerFinish}; {@link #writerFree} before that leaves no file).
     */
    static native long writerOpenFile(String path, long options);

    /**
     * Appends {@code b[offset, offset+length)} and cuts the blocks at once (no staging: the
     * caller buffers a block's worth, or flushes). Returns the bytes of file now waiting to be
     * drained (0 for a file writer).
     */
    static native int writerWrite(long writer, byte[] b, int offset, int length);

    /** Moves up to {@code length} waiting bytes into {@code dst}; returns how many. */
    static native int writerDrain(long writer, byte[] dst, int offset, int length);

    /**
     * Ends the file (footer, trailer; a file writer also syncs and renames into place). Returns
     * the bytes waiting to be drained. The handle stays valid for draining and must be freed.
     */
    static native int writerFinish(long writer);

    static native void writerFree(long writer);

    // --- reading a stream front to back ----------------------------------------------------

    /**
     * A reader of a kompakt file front to back, fed by {@link #readerNext}'s input stream. With
     * {@code concatenated}, files that follow one another are read as one stream of bytes.
     */
    static native long readerOpen(long threads, boolean concatenated, long[] dictionaries);

    /** A reader of a file on disk (read by Rust: {@code input} of readerNext is then null). */
    static native long readerOpenFile(String path, long threads, long[] dictionaries);

    /**
     * Reads and decodes the next block, pulling compressed bytes from {@code input} through
     * {@code transfer} (its {@code read(byte[], int, int)}, at most transfer.length at a time).
     * Returns the block's decoded length (at most 64 MiB; 0 is possible for an empty stream's
     * file), then {@link #readerTake} copies it out; -1 once the input ended after a complete,
     * checked file. A truncated or damaged input throws {@link CorruptDataException}.
     */
    static native int readerNext(long reader, InputStream input, byte[] transfer);

    /** Copies the decoded block of the last readerNext into {@code dst} at {@code offset}. */
    static native void readerTake(long reader, byte[] dst, int offset);

    static native void readerFree(long reader);

    // --- random access ---------------------------------------------------------------------

    static native long fileOpen(String path, long threads, long[] dictionaries);

    static native int fileStreamCount(long file);

    static native long fileStreamLength(long file, int stream);

    /** The footer's metadata bytes (JSON for Python and R files; empty for plain data). */
    static native byte[] fileMetadata(long file);

    /** What the file holds: "plain", "table", "python-object", "r-object" (kompakt_api::FileKind). */
    static native String fileKind(long file);

    /** Reads up to {@code length} bytes of a stream at {@code position}; returns how many (-1 at its end). */
    static native int fileRead(long file, int stream, long position, byte[] dst, int offset, int length);

    static native int fileReadDirect(long file, int stream, long position, ByteBuffer dst, int pos, int length);

    static native void fileClose(long file);

    // --- tables ----------------------------------------------------------------------------
    // Arrow data crosses through the C data interface: an "address" is that of an ArrowSchema
    // or ArrowArray struct (org.apache.arrow.c.ArrowSchema/ArrowArray.memoryAddress()). Structs
    // passed in are moved (Rust releases them, whatever the call does); structs filled by a call
    // belong to the caller, who imports (and so releases) them. A batch is a struct array whose
    // children are the columns, as Data.exportVectorSchemaRoot makes it.
    //
    // "portable": read with Java-friendly types that every Arrow Java consumer (Spark's
    // ArrowColumnVector included) accepts: dictionaries decoded to their values, unsigned
    // integers widened to the next signed type (uint64 to decimal(20, 0)), float16 to float32,
    // date64 to date32, timestamps and durations in microseconds, fixed-size binary to binary,
    // large lists to lists. Times of day have no such type and are refused, naming the column.

    /**
     * The table files a location names, sorted: a folder's *.kpk files (not those whose names
     * start with "_" or "."), the files a glob matches (local, or s3:// with patterns in folder
     * and file names), a file or a URL as it is. Throws {@link KompaktIOException} naming the
     * location when nothing matches.
     */
    static native String[] tableList(String location);
    /** Opens a table file (a path or an s3://, http(s):// URL) for reading; threads as fileOpen. */
    static native long tableOpen(String path, long threads);
    /** Rows, rows per group, row groups and the file's size in bytes: 4 values. */
    static native long[] tableSizes(long table);
    /** The table's schema (portable: as {@link #tableRead} with portable reads it) into {@code schemaAddress}. */
    static native void tableSchema(long table, boolean portable, long schemaAddress);
    /** User metadata as key, value, key, value, ... */
    static native String[] tableMetadata(long table);
    /** The sort keys' columns, most significant first. */
    static native String[] tableSortColumns(long table);
    /** Per sort key: 1 if descending, plus 2 if nulls come first. */
    static native int[] tableSortFlags(long table);
    /** Per column: bytes stored in the file, then decoded (before compression): 2 values each. */
    static native long[] tableColumnSizes(long table);
    /**
     * Statistics of column {@code column}, one row per row group, as a struct array exported into
     * the two addresses: {@code null_count} (uint64), {@code min} and {@code max} (the column's
     * bound type, null where unknown). Returns false (and exports nothing) if the table has no
     * statistics for that column.
     */
    static native boolean tableStatistics(long table, int column, long schemaAddress, long arrayAddress);
    /**
     * The row ranges of {@code [from, to)} that may hold rows passing every filter (binary search
     * on the first ascending sort key, then the row-group statistics): from, to, from, to, ...
     * Filter i is {@code columns[i] ops[i] values}, its values an Arrow array moved in from
     * {@code valueSchemas[i]}, {@code valueArrays[i]} (one value for a comparison, any number for
     * "in" and "not in"; ops: ==, !=, <, <=, >, >=, in, not in). Nothing is read but the index.
     */
    static native long[] tablePlan(
            long table, long from, long to, String[] columns, String[] ops, long[] valueSchemas, long[] valueArrays);
    /**
     * Reads rows {@code [from, to)} of the columns at positions {@code columns} (null: all) into
     * one batch, exported into the two addresses.
     */
    static native void tableRead(
            long table, int[] columns, long from, long to, boolean portable, long schemaAddress, long arrayAddress);
    /**
     * As {@link #tableRead}, keeping only the rows that pass every filter (given as in
     * {@link #tablePlan}; only the planned ranges are read). Returns row groups read, row groups
     * in the table and rows scanned.
     */
    static native long[] tableReadWhere(
            long table, int[] columns, long from, long to, String[] filterColumns, String[] ops, long[] valueSchemas,
            long[] valueArrays, boolean portable, long schemaAddress, long arrayAddress);
    /** Rows at positions {@code rows} (any order, repeats allowed) of the columns, as {@link #tableRead}. */
    static native void tableTake(
            long table, int[] columns, long[] rows, boolean portable, long schemaAddress, long arrayAddress);
    /**
     * Decodes rows {@code [from, to)} of a fixed-width column (numbers, dates, timestamps,
     * durations, and booleans as one byte per row, 0 or 1; not decimals or dictionaries)
     * straight into {@code dst} at
     * {@code dstPos}: {@code dstLength} must be the rows times the type's width. If
     * {@code validity} is not null it gets one bit per row at {@code validityPos}, least
     * significant first, set = valid (all set when no row is null). Returns whether any row is
     * null (the values of null rows are unspecified). Both buffers must be direct.
     */
    static native boolean tableReadInto(
            long table, int column, long from, long to, ByteBuffer dst, int dstPos, int dstLength, ByteBuffer validity,
            int validityPos);
    /**
     * As {@link #tableReadInto}, into raw memory: {@code dstLength} bytes at {@code dstAddress}
     * and, if {@code nullsAddress} is not 0, one byte per row there (1 = null, 0 = not: Spark's
     * OffHeapColumnVector layout). Returns the number of null rows. The memory must stay
     * allocated and unused by others during the call.
     */
    static native long tableReadIntoAddress(
            long table, int column, long from, long to, long dstAddress, long dstLength, long nullsAddress);
    static native void tableClose(long table);

    // --- writing tables --------------------------------------------------------------------
    /**
     * Validated table options (the front door's rules, as Python and R write tables). Strings may
     * be null, numbers {@link #NOT_GIVEN}: codec spec ("zstd", "lz4:3", "none", ...) and
     * level for every page, the codec of plain string pages, encoding threads, rows per row
     * group, the sort keys (flags as {@link #tableSortFlags}), user metadata as key, value, ...
     */
    static native long tableOptionsNew(
            String codec, long level, String stringCodec, long threads, long rowsPerGroup, String[] sortColumns,
            int[] sortFlags, String[] metadata);
    static native void tableOptionsFree(long options);
    /**
     * A writer of a new table file at {@code path} with the schema moved in from
     * {@code schemaAddress}. Written atomically: a temporary file beside it until
     * {@link #tableWriterFinish}; {@link #tableWriterFree} before that leaves no file.
     */
    static native long tableWriterOpen(String path, long schemaAddress, long options);
    /** Writes one batch (moved in; of the writer's schema). Returns the rows written so far. */
    static native long tableWriterWrite(long writer, long schemaAddress, long arrayAddress);
    /** Ends the file, syncs it and renames it into place. Returns the rows written. */
    static native long tableWriterFinish(long writer);
    static native void tableWriterFree(long writer);
    /**
     * Appends one batch (moved in; with the table's column types) to the table file at
     * {@code path} in place (a crash leaves the table as it was). Returns the rows appended.
     */
    static native long tableAppend(String path, long schemaAddress, long arrayAddress, long options);
}
