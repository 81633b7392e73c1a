package dev.kompakt;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Random access to a kompakt file's streams: opening reads only the file's index; a read decodes
 * only the blocks its byte range covers, in parallel, straight into the destination.
 *
 * <pre>{@code
 * try (KompaktFile f = KompaktFile.open(path)) {
 *     byte[] header = new byte[100];
 *     int n = f.read(0, 1_000_000, header, 0, header.length);   // stream 0 at byte 1,000,000
 *     byte[] all = f.readFully(0);
 * }
 * }</pre>
 *
 * <p>A file holds zero or more streams, numbered from 0: plain data has one; objects saved by
 * Python or R and tables hold several, described by {@link #metadata()} and {@link #kind()}.
 * Thread-safe (calls are serialized). Using a closed file throws a {@link KompaktUsageException}.
 */
public final class KompaktFile implements AutoCloseable {
    private final NativeHandle file;
    private final ReadOptions options;
    private final String name;

    private KompaktFile(long handle, ReadOptions options, String name) {
        this.file = new NativeHandle(this, handle, Native::fileClose, "file");
        this.options = options;
        this.name = name;
    }

    /**
     * Opens a file with the default read options.
     *
     * @param path the file
     * @return the open file
     * @throws KompaktIOException if it cannot be read
     * @throws CorruptDataException if it is not a kompakt file or its index is damaged
     * @throws KompaktException for other failures
     */
    public static KompaktFile open(Path path) throws KompaktException {
        return open(path, ReadOptions.DEFAULT);
    }

    /**
     * Opens a file.
     *
     * @param path the file
     * @param options threads, dictionaries, the largest {@link #readFully} (null: the defaults)
     * @return the open file
     * @throws KompaktException as {@link #open(Path)}
     */
    public static KompaktFile open(Path path, ReadOptions options) throws KompaktException {
        Objects.requireNonNull(path, "path");
        return open(path.toString(), options);
    }

    /**
     * Opens a file by its location: a path, or a URL kompakt reads ({@code s3://bucket/key},
     * {@code https://...}), fetching only the bytes it needs.
     *
     * @param location the path or URL
     * @param options threads, dictionaries, the largest {@link #readFully} (null: the defaults)
     * @return the open file
     * @throws KompaktException as {@link #open(Path)}
     */
    public static KompaktFile open(String location, ReadOptions options) throws KompaktException {
        Objects.requireNonNull(location, "location");
        ReadOptions o = options == null ? ReadOptions.DEFAULT : options;
        long[] dictionaries = o.acquireDictionaries();
        try {
            return new KompaktFile(Native.fileOpen(location, o.threads(), dictionaries), o, location);
        } finally {
            if (dictionaries != null) {
                o.releaseDictionaries();
            }
        }
    }

    /**
     * The number of streams.
     *
     * @return the count
     * @throws KompaktUsageException if the file is closed
     */
    public synchronized int streamCount() throws KompaktException {
        long h = file.acquire();
        try {
            return Native.fileStreamCount(h);
        } finally {
            file.release();
        }
    }

    /**
     * A stream's decoded length.
     *
     * @param stream the stream's number
     * @return its length in bytes
     * @throws InvalidOptionException if there is no such stream
     * @throws KompaktUsageException if the file is closed
     */
    public synchronized long streamLength(int stream) throws KompaktException {
        long h = file.acquire();
        try {
            return Native.fileStreamLength(h, stream);
        } finally {
            file.release();
        }
    }

    /**
     * The footer's metadata: JSON for files written by Python and R, empty for plain data.
     *
     * @return a new array
     * @throws KompaktUsageException if the file is closed
     */
    public synchronized byte[] metadata() throws KompaktException {
        long h = file.acquire();
        try {
            return Native.fileMetadata(h);
        } finally {
            file.release();
        }
    }

    /**
     * The metadata as text (UTF-8).
     *
     * @return the metadata, empty for plain data
     * @throws KompaktUsageException if the file is closed
     */
    public String metadataString() throws KompaktException {
        return new String(metadata(), StandardCharsets.UTF_8);
    }

    /**
     * What the file holds: {@code "plain"}, {@code "table"}, {@code "python-object"} or
     * {@code "r-object"}.
     *
     * @return the kind
     * @throws KompaktUsageException if the file is closed
     */
    public synchronized String kind() throws KompaktException {
        long h = file.acquire();
        try {
            return Native.fileKind(h);
        } finally {
            file.release();
        }
    }

    /**
     * Reads up to {@code len} bytes of a stream starting at {@code position} into
     * {@code dst[off, off + len)}; fewer only at the stream's end.
     *
     * @param stream the stream's number
     * @param position where to start in the stream's decoded bytes, 0 or more
     * @param dst the destination
     * @param off where in {@code dst}
     * @param len the most bytes to read
     * @return the bytes read, or -1 if {@code position} is at or past the stream's end
     * @throws IndexOutOfBoundsException if the range is not inside {@code dst}
     * @throws IllegalArgumentException if {@code position} is negative
     * @throws InvalidOptionException if there is no such stream
     * @throws KompaktException if the data is damaged ({@link CorruptDataException}), or the file is closed
     */
    public synchronized int read(int stream, long position, byte[] dst, int off, int len) throws KompaktException {
        Objects.requireNonNull(dst, "dst");
        Objects.checkFromIndexSize(off, len, dst.length);
        checkPosition(position);
        long h = file.acquire();
        try {
            return Native.fileRead(h, stream, position, dst, off, len);
        } finally {
            file.release();
        }
    }

    /**
     * Reads up to {@code dst.remaining()} bytes of a stream starting at {@code position} into
     * {@code dst}, whose position advances past them. A direct buffer is filled in place.
     *
     * @param stream the stream's number
     * @param position where to start in the stream's decoded bytes, 0 or more
     * @param dst the destination
     * @return the bytes read, or -1 if {@code position} is at or past the stream's end
     * @throws ReadOnlyBufferException if {@code dst} is read-only
     * @throws KompaktException as {@link #read(int, long, byte[], int, int)}
     */
    public synchronized int read(int stream, long position, ByteBuffer dst) throws KompaktException {
        Objects.requireNonNull(dst, "dst");
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        checkPosition(position);
        int n;
        long h = file.acquire();
        try {
            if (dst.isDirect()) {
                n = Native.fileReadDirect(h, stream, position, dst, dst.position(), dst.remaining());
            } else {
                n = Native.fileRead(h, stream, position, dst.array(), dst.arrayOffset() + dst.position(),
                        dst.remaining());
            }
        } finally {
            file.release();
        }
        if (n > 0) {
            dst.position(dst.position() + n);
        }
        return n;
    }

    /**
     * A whole stream.
     *
     * @param stream the stream's number
     * @return its decoded bytes
     * @throws LimitExceededException if it is longer than the options'
     *     {@link ReadOptions#maxDecompressedLength()}
     * @throws InvalidOptionException if there is no such stream
     * @throws KompaktException if the data is damaged, or the file is closed
     */
    public synchronized byte[] readFully(int stream) throws KompaktException {
        long length = streamLength(stream);
        if (length > options.maxDecompressedLength()) {
            throw new LimitExceededException(name + ": stream " + stream + " decodes to " + length
                    + " bytes, more than the " + options.maxDecompressedLength()
                    + " allowed (maxDecompressedLength)");
        }
        byte[] out = new byte[(int) length];
        int done = 0;
        while (done < out.length) {
            int n = read(stream, done, out, done, out.length - done);
            if (n <= 0) {
                throw new CorruptDataException(name + ": stream " + stream + " ended at " + done
                        + " bytes, its index says " + length);
            }
            done += n;
        }
        return out;
    }

    private static void checkPosition(long position) {
        if (position < 0) {
            throw new IllegalArgumentException("position is negative: " + position);
        }
    }

    /** Closes the file; idempotent. */
    @Override
    public void close() {
        file.close();
    }

    @Override
    public String toString() {
        return "KompaktFile[" + name + (file.isClosed() ? ", closed" : "") + "]";
    }
}
