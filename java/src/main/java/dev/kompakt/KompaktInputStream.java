package dev.kompakt;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Decompresses a kompakt file read front to back from another input stream (a pipe, a socket,
 * a file), or from a file that kompakt reads itself ({@link #open}). Every block's checksum is
 * verified before its bytes are returned, and the file's end is checked: damaged or truncated
 * input is a {@link CorruptDataException}, never wrong data.
 *
 * <pre>{@code
 * try (InputStream in = new KompaktInputStream(Files.newInputStream(path))) {
 *     in.transferTo(out);
 * }
 * try (DataInputStream in = new DataInputStream(KompaktInputStream.open(path, ReadOptions.DEFAULT))) {
 *     int n = in.readInt();   // small reads are plain Java: blocks are decoded into a buffer
 * }
 * }</pre>
 *
 * <p>The stream reads the input in 64 KiB pieces and decodes one block at a time into a pooled
 * buffer; {@link #read()} and other small reads are served from it without a native call, and
 * {@link #available()} is what is left of the block. A {@link #concatenated} stream reads kompakt
 * files that follow one another as one stream of bytes (as {@code cat a.kpk b.kpk} makes). The
 * stream may read the input past the file's end (it reads ahead), so the input should hold
 * nothing else. After an exception the stream is broken: later reads throw. Its methods are
 * synchronized (a stream shared by mistake cannot corrupt memory), but it is made for one thread.
 * No finalizer: an unclosed stream's native memory is freed when
 * it is garbage collected.
 */
public class KompaktInputStream extends InputStream {
    /** Pooled bytes read from the input at a time. */
    static final int TRANSFER_SIZE = 64 << 10;

    private final InputStream in;
    private final NativeHandle reader;
    private byte[] transfer;
    private byte[] block;
    private int pos;
    private int limit;
    private boolean eof;
    private boolean closed;
    /** The exception that broke the stream: later reads refuse. */
    private IOException failure;

    /**
     * A stream decoding the kompakt file that {@code in} holds, with the default read options.
     *
     * @param in the compressed bytes; closed by {@link #close()}
     * @throws KompaktException if the reader cannot be made
     */
    public KompaktInputStream(InputStream in) throws KompaktException {
        this(in, ReadOptions.DEFAULT);
    }

    /**
     * A stream decoding the kompakt file that {@code in} holds.
     *
     * @param in the compressed bytes; closed by {@link #close()}
     * @param options threads and dictionaries (null: the defaults)
     * @throws KompaktException if the reader cannot be made (an invalid thread count)
     */
    public KompaktInputStream(InputStream in, ReadOptions options) throws KompaktException {
        this(Objects.requireNonNull(in, "in"), null, false, options);
    }

    private KompaktInputStream(InputStream in, Path path, boolean concatenated, ReadOptions options)
            throws KompaktException {
        ReadOptions o = options == null ? ReadOptions.DEFAULT : options;
        long[] dictionaries = o.acquireDictionaries();
        long r;
        try {
            r = path == null
                    ? Native.readerOpen(o.threads(), concatenated, dictionaries)
                    : Native.readerOpenFile(path.toString(), o.threads(), dictionaries);
        } finally {
            if (dictionaries != null) {
                o.releaseDictionaries();
            }
        }
        this.in = in;
        this.reader = new NativeHandle(this, r, Native::readerFree, "input stream");
        this.transfer = in == null ? null : BufferPool.acquire(TRANSFER_SIZE);
    }

    /**
     * A stream decoding kompakt files that follow one another in {@code in} as one stream of
     * bytes: the data of the first, then of the second, and so on. Each file is checked whole.
     *
     * @param in the compressed bytes; closed by {@link #close()}
     * @param options threads and dictionaries (null: the defaults)
     * @return the stream
     * @throws KompaktException if the reader cannot be made
     */
    public static KompaktInputStream concatenated(InputStream in, ReadOptions options) throws KompaktException {
        return new KompaktInputStream(Objects.requireNonNull(in, "in"), null, true, options);
    }

    /**
     * A stream decoding a single-stream kompakt file that kompakt reads itself (no Java input
     * stream in between).
     *
     * @param path the file
     * @param options threads and dictionaries (null: the defaults)
     * @return the stream
     * @throws KompaktException if the file cannot be opened
     */
    public static KompaktInputStream open(Path path, ReadOptions options) throws KompaktException {
        Objects.requireNonNull(path, "path");
        return new KompaktInputStream(null, path, false, options);
    }

    private void ensureOpen() throws KompaktUsageException {
        if (closed) {
            throw new KompaktUsageException("the stream is closed");
        }
        if (failure != null) {
            throw new KompaktUsageException("the stream failed earlier: " + failure, failure);
        }
    }

    /**
     * Decodes the next non-empty block into the buffer, or into {@code direct} at
     * {@code directOff} if it fits in {@code directLen} bytes (then returns its length, and the
     * buffer stays empty).
     *
     * @return the bytes that went to {@code direct}, 0 if the block went to the buffer, -1 at the end
     */
    private int next(byte[] direct, int directOff, int directLen, boolean take) throws IOException {
        if (eof) {
            return -1;
        }
        try {
            return decode(direct, directOff, directLen, take);
        } catch (IOException e) {
            failure = e;
            pos = limit = 0;
            throw e;
        }
    }

    private int decode(byte[] direct, int directOff, int directLen, boolean take) throws IOException {
        long h = reader.acquire();
        try {
            while (true) {
                int n = Native.readerNext(h, in, transfer);
                if (n < 0) {
                    eof = true;
                    return -1;
                }
                if (n == 0) {
                    continue;
                }
                if (!take) {
                    pos = 0;
                    limit = n;
                    return 0;
                }
                if (direct != null && n <= directLen) {
                    Native.readerTake(h, direct, directOff);
                    return n;
                }
                if (block == null || block.length < n) {
                    BufferPool.release(block);
                    block = null;
                    block = BufferPool.acquire(n);
                }
                Native.readerTake(h, block, 0);
                pos = 0;
                limit = n;
                return 0;
            }
        } finally {
            reader.release();
        }
    }

    @Override
    public synchronized int read() throws IOException {
        if (pos < limit) {
            return block[pos++] & 0xff;
        }
        ensureOpen();
        if (next(null, 0, 0, true) < 0) {
            return -1;
        }
        return block[pos++] & 0xff;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        ensureOpen();
        if (len == 0) {
            return 0;
        }
        if (pos == limit) {
            int direct = next(b, off, len, true);
            if (direct != 0) {
                return direct; // a whole block decoded straight into b, or -1
            }
        }
        int n = Math.min(len, limit - pos);
        System.arraycopy(block, pos, b, off, n);
        pos += n;
        return n;
    }

    /**
     * Skips bytes; blocks skipped whole are decoded (their checksums checked) but not copied.
     */
    @Override
    public synchronized long skip(long n) throws IOException {
        ensureOpen();
        long skipped = 0;
        while (skipped < n) {
            if (pos == limit) {
                // Peek at the next block's length without copying it out.
                if (next(null, 0, 0, false) < 0) {
                    break;
                }
                int size = limit;
                if (n - skipped >= size) {
                    skipped += size;
                    pos = limit = 0;
                    continue;
                }
                // Part of this block is wanted: take it.
                pos = limit = 0;
                try {
                    takeBlock(size);
                } catch (IOException e) {
                    failure = e;
                    throw e;
                }
                limit = size;
            }
            int step = (int) Math.min(n - skipped, limit - pos);
            pos += step;
            skipped += step;
        }
        return skipped;
    }

    /** Copies the block that readerNext decoded, {@code size} bytes, into the buffer. */
    private void takeBlock(int size) throws IOException {
        long h = reader.acquire();
        try {
            if (block == null || block.length < size) {
                BufferPool.release(block);
                block = null;
                block = BufferPool.acquire(size);
            }
            Native.readerTake(h, block, 0);
        } finally {
            reader.release();
        }
    }

    /**
     * The decoded bytes left in the current block: what can be read without decoding more.
     */
    @Override
    public synchronized int available() throws IOException {
        ensureOpen();
        return limit - pos;
    }

    /** Releases the reader and its buffers and closes the input stream; idempotent. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        reader.close();
        BufferPool.release(block);
        BufferPool.release(transfer);
        block = null;
        transfer = null;
        pos = limit = 0;
        if (in != null) {
            in.close();
        }
    }
}
