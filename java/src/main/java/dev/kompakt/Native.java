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
}
