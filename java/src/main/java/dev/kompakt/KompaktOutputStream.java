package dev.kompakt;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Compresses what is written to it into a kompakt file, written to another output stream or,
 * atomically, to a file. The result is one stream of blocks, readable by
 * {@link KompaktInputStream}, {@link Kompakt#decompress(byte[])}, {@link KompaktFile},
 * {@code kompakt decompress} and Python's {@code kompakt.decompress}.
 *
 * <pre>{@code
 * try (OutputStream out = new KompaktOutputStream(Files.newOutputStream(path),
 *         WriteOptions.builder().codec("zstd:3").build())) {
 *     out.write(data);
 * }
 * try (KompaktOutputStream out = KompaktOutputStream.toFile(path, WriteOptions.DEFAULT)) {
 *     out.write(data);   // the file appears, whole, when close() returns
 * }
 * }</pre>
 *
 * <p>Buffering: bytes are collected in a buffer of one block ({@link WriteOptions#blockSize()},
 * 1 MiB by default), or of 8 blocks when the options' threads are not 1 so that the blocks are
 * compressed in parallel; a full buffer is compressed, and the compressed bytes written to the
 * output stream. {@link #flush()} compresses what is buffered as a shorter block (flush rarely:
 * each flush cuts a block) and flushes the output stream. {@link #close()} writes the rest and the
 * file's index and closes the output stream; the data is complete only then. Buffers come from a
 * small recycling pool.
 *
 * <p>Not thread-safe (like most streams). After an exception, the stream is broken: further
 * writes throw, and {@link #close()} releases everything without finishing the file (a
 * {@link #toFile} stream then leaves no file). No finalizer: an unclosed stream's native memory
 * is freed when it is garbage collected, and its file, if any, never appears.
 */
public class KompaktOutputStream extends OutputStream {
    /** Pooled bytes moved from the native writer to the output stream at a time. */
    static final int TRANSFER_SIZE = 64 << 10;

    private final OutputStream out;
    private final NativeHandle writer;
    private final int capacity;
    private byte[] buffer;
    private byte[] transfer;
    private int count;
    private boolean closed;
    private IOException failure;
    private RuntimeException runtimeFailure;

    /**
     * A stream compressing with the default options (zstd:1, 1 MiB blocks, all cores) into
     * {@code out}.
     *
     * @param out where the kompakt file goes; closed by {@link #close()}
     * @throws KompaktException if the writer cannot be made
     */
    public KompaktOutputStream(OutputStream out) throws KompaktException {
        this(out, WriteOptions.DEFAULT);
    }

    /**
     * A stream compressing with {@code options} into {@code out}.
     *
     * @param out where the kompakt file goes; closed by {@link #close()}
     * @param options how (null: the defaults)
     * @throws KompaktException if the writer cannot be made
     */
    public KompaktOutputStream(OutputStream out, WriteOptions options) throws KompaktException {
        this(Objects.requireNonNull(out, "out"), null, options);
    }

    private KompaktOutputStream(OutputStream out, Path path, WriteOptions options) throws KompaktException {
        WriteOptions o = options == null ? WriteOptions.DEFAULT : options;
        long h = o.acquire();
        long w;
        int bufferSize;
        try {
            // How much to hand over at a time is the writer's rule (a block, or the blocks its
            // threads compress at once).
            bufferSize = Native.optionsStreamBuffer(h);
            w = path == null ? Native.writerOpen(h) : Native.writerOpenFile(path.toString(), h);
        } finally {
            o.release();
        }
        this.out = out;
        this.writer = new NativeHandle(this, w, Native::writerFree, "stream");
        this.capacity = bufferSize;
        this.buffer = BufferPool.acquire(capacity);
        this.transfer = out == null ? null : BufferPool.acquire(TRANSFER_SIZE);
    }

    /**
     * A stream whose kompakt file is written to {@code path} atomically: through a temporary
     * file beside it, renamed into place by {@link #close()}. If the stream is closed after an
     * error, or {@link #abort()}ed, no file appears (an existing one stays as it was).
     *
     * @param path the file, on this machine (kompakt reads URLs but never writes them)
     * @param options how (null: the defaults)
     * @return the stream
     * @throws KompaktException if the temporary file cannot be created, or the options are invalid
     */
    public static KompaktOutputStream toFile(Path path, WriteOptions options) throws KompaktException {
        Objects.requireNonNull(path, "path");
        return new KompaktOutputStream(null, path, options);
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new KompaktUsageException("the stream is closed");
        }
        if (failure != null) {
            throw new KompaktUsageException("the stream failed earlier: " + failure, failure);
        }
        if (runtimeFailure != null) {
            throw new KompaktUsageException("the stream failed earlier: " + runtimeFailure, runtimeFailure);
        }
    }

    @Override
    public synchronized void write(int b) throws IOException {
        if (count == capacity) {
            writeBuffer();
        }
        if (closed || failure != null || runtimeFailure != null) {
            ensureOpen();
        }
        buffer[count++] = (byte) b;
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        ensureOpen();
        while (len > 0) {
            if (count == 0 && len >= capacity) {
                // Whole buffers straight from the caller's array: no copy.
                compress(b, off, capacity);
                off += capacity;
                len -= capacity;
                continue;
            }
            int n = Math.min(len, capacity - count);
            System.arraycopy(b, off, buffer, count, n);
            count += n;
            off += n;
            len -= n;
            if (count == capacity) {
                writeBuffer();
            }
        }
    }

    /**
     * Compresses what is buffered (as a shorter block) and flushes the output stream, so that
     * everything written so far can be read back once the file is complete. Each flush cuts a
     * block: flushing after small writes makes a poorly compressed file.
     */
    @Override
    public synchronized void flush() throws IOException {
        ensureOpen();
        if (count > 0) {
            writeBuffer();
        }
        if (out != null) {
            try {
                out.flush();
            } catch (IOException e) {
                throw fail(e);
            }
        }
    }

    private void writeBuffer() throws IOException {
        ensureOpen();
        int n = count;
        count = 0;
        compress(buffer, 0, n);
    }

    private void compress(byte[] b, int off, int len) throws IOException {
        try {
            long h = writer.acquire();
            int pending;
            try {
                pending = Native.writerWrite(h, b, off, len);
                drain(h, pending);
            } finally {
                writer.release();
            }
        } catch (IOException e) {
            throw fail(e);
        } catch (RuntimeException e) {
            runtimeFailure = e;
            throw e;
        }
    }

    /** Moves the native writer's waiting bytes to the output stream. */
    private void drain(long h, int pending) throws IOException {
        while (pending > 0 && out != null) {
            int n = Native.writerDrain(h, transfer, 0, Math.min(pending, transfer.length));
            if (n <= 0) {
                throw new KompaktInternalException("the writer said " + pending + " bytes wait, but gave none");
            }
            out.write(transfer, 0, n);
            pending -= n;
        }
    }

    private IOException fail(IOException e) {
        if (failure == null) {
            failure = e;
        }
        return e;
    }

    /**
     * Finishes the file (the buffered rest, then the index) and closes the output stream; a
     * {@link #toFile} stream's file appears now. Idempotent. After an earlier exception it
     * releases the writer, closes the output stream and throws {@link KompaktUsageException}
     * (nothing is committed; {@link #abort()} discards without an exception).
     *
     * @throws IOException if finishing or closing fails (the output is then incomplete)
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        Throwable error = null;
        try {
            if (failure == null && runtimeFailure == null) {
                if (count > 0) {
                    writeBuffer();
                }
                long h = writer.acquire();
                try {
                    drain(h, Native.writerFinish(h));
                } finally {
                    writer.release();
                }
            } else {
                // Nothing was finished: say so, rather than let a caller that ignores write
                // errors (a PrintStream) take the close for a complete file.
                Throwable cause = failure != null ? failure : runtimeFailure;
                error = new KompaktUsageException("the stream failed earlier, so its file was not finished: " + cause, cause);
            }
        } catch (IOException | RuntimeException | Error e) {
            error = e;
        } finally {
            closed = true;
            release();
            if (out != null) {
                try {
                    out.close();
                } catch (IOException | RuntimeException e) {
                    if (error == null) {
                        error = e;
                    } else {
                        error.addSuppressed(e);
                    }
                }
            }
        }
        rethrow(error);
    }

    /**
     * Discards the stream: no index is written, a {@link #toFile} stream leaves no file, and the
     * output stream is closed (what was written to it is an incomplete file). Idempotent; a
     * no-op after {@link #close()}.
     *
     * @throws IOException if closing the output stream fails
     */
    public synchronized void abort() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        release();
        if (out != null) {
            out.close();
        }
    }

    private void release() {
        writer.close();
        BufferPool.release(buffer);
        BufferPool.release(transfer);
        buffer = null;
        transfer = null;
        count = 0;
    }

    private static void rethrow(Throwable error) throws IOException {
        if (error == null) {
            return;
        }
        if (error instanceof IOException) {
            throw (IOException) error;
        }
        if (error instanceof RuntimeException) {
            throw (RuntimeException) error;
        }
        throw (Error) error;
    }
}
