package dev.kompakt;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Objects;

/**
 * kompakt for the JVM: fast, compressed, checksummed files of blocks, compressed and decoded
 * by kompakt's Rust core (the native library inside this jar) on all cores.
 *
 * <p>This class compresses and decompresses whole byte arrays and buffers. The data is a
 * complete single-stream kompakt file, the same bytes that {@code kompakt compress} and Python's
 * {@code kompakt.compress} write and read:
 *
 * <pre>{@code
 * byte[] packed = Kompakt.compress(data);                                       // default: zstd:1
 * byte[] fast = Kompakt.compress(data, WriteOptions.builder().codec("lz4").build());
 * byte[] back = Kompakt.decompress(packed);
 * }</pre>
 *
 * Streams of any length: {@link KompaktOutputStream}, {@link KompaktInputStream}; random access
 * to a file's streams: {@link KompaktFile}; dictionaries for small values: {@link Dictionary}.
 * Every method is thread-safe. Damaged data is a {@link CorruptDataException}, never a crash or
 * a wrong result: every block is checksummed.
 */
public final class Kompakt {
    private Kompakt() {}

    /**
     * The native library's version (kompakt's), e.g. {@code "0.1.0"}.
     *
     * @return the version
     */
    public static String version() {
        return Native.version();
    }

    /**
     * Compresses with the default options.
     *
     * @param src the data
     * @return a kompakt file holding it
     * @throws KompaktException if compression fails
     */
    public static byte[] compress(byte[] src) throws KompaktException {
        return compress(src, WriteOptions.DEFAULT);
    }

    /**
     * Compresses.
     *
     * @param src the data
     * @param options how (null: the defaults)
     * @return a kompakt file holding it
     * @throws KompaktException if compression fails
     */
    public static byte[] compress(byte[] src, WriteOptions options) throws KompaktException {
        Objects.requireNonNull(src, "src");
        return compress(src, 0, src.length, options);
    }

    /**
     * Compresses {@code src[offset, offset + length)}.
     *
     * @param src the array
     * @param offset where the data starts
     * @param length its length
     * @param options how (null: the defaults)
     * @return a kompakt file holding it
     * @throws IndexOutOfBoundsException if the range is not inside {@code src}
     * @throws KompaktException if compression fails
     */
    public static byte[] compress(byte[] src, int offset, int length, WriteOptions options) throws KompaktException {
        Objects.requireNonNull(src, "src");
        Objects.checkFromIndexSize(offset, length, src.length);
        WriteOptions o = options == null ? WriteOptions.DEFAULT : options;
        long h = o.acquire();
        try {
            return Native.compress(src, offset, length, h);
        } finally {
            o.release();
        }
    }

    /**
     * Compresses the remaining bytes of {@code src} into {@code dst} at its position. Direct
     * buffers are read and written in place; heap buffers through their arrays. On success the
     * positions of both advance (src to its limit); on failure neither moves.
     *
     * @param src the data: position to limit
     * @param dst where the kompakt file goes: position to limit
     * @param options how (null: the defaults)
     * @return the bytes written to {@code dst}
     * @throws LimitExceededException if {@code dst} has too little room
     *     ({@link #maxCompressedLength(long, WriteOptions)} always suffices)
     * @throws ReadOnlyBufferException if {@code dst} is read-only
     * @throws KompaktException if compression fails
     */
    public static int compress(ByteBuffer src, ByteBuffer dst, WriteOptions options) throws KompaktException {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        WriteOptions o = options == null ? WriteOptions.DEFAULT : options;
        int n;
        if (src.isDirect() && dst.isDirect()) {
            long h = o.acquire();
            try {
                n = Native.compressDirect(src, src.position(), src.remaining(), dst, dst.position(), dst.remaining(), h);
            } finally {
                o.release();
            }
        } else {
            byte[] packed;
            if (src.hasArray()) {
                packed = compress(src.array(), src.arrayOffset() + src.position(), src.remaining(), o);
            } else {
                byte[] copy = new byte[src.remaining()];
                src.duplicate().get(copy);
                packed = compress(copy, 0, copy.length, o);
            }
            if (packed.length > dst.remaining()) {
                throw new LimitExceededException("the destination has room for " + dst.remaining()
                        + " bytes, the compressed data needs " + packed.length
                        + " (maxCompressedLength gives a size that always suffices)");
            }
            dst.duplicate().put(packed);
            n = packed.length;
        }
        src.position(src.limit());
        dst.position(dst.position() + n);
        return n;
    }

    /**
     * The most bytes compressing {@code length} bytes with these options can produce (a block
     * that does not shrink is stored raw, so this is little more than {@code length}).
     *
     * @param length the data's length
     * @param options how (null: the defaults)
     * @return the bound in bytes
     * @throws IllegalArgumentException if {@code length} is negative
     */
    public static long maxCompressedLength(long length, WriteOptions options) {
        if (length < 0) {
            throw new IllegalArgumentException("length is negative: " + length);
        }
        WriteOptions o = options == null ? WriteOptions.DEFAULT : options;
        try {
            long h = o.acquire();
            try {
                return Native.compressBound(length, h);
            } finally {
                o.release();
            }
        } catch (KompaktUsageException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /**
     * Decompresses a single-stream kompakt file with the default read options.
     *
     * @param src the file's bytes
     * @return the data
     * @throws CorruptDataException if the data is damaged or not kompakt's
     * @throws MissingDictionaryException if it needs a dictionary
     * @throws KompaktException for other failures
     */
    public static byte[] decompress(byte[] src) throws KompaktException {
        return decompress(src, ReadOptions.DEFAULT);
    }

    /**
     * Decompresses a single-stream kompakt file.
     *
     * @param src the file's bytes
     * @param options threads, dictionaries, the largest result (null: the defaults)
     * @return the data
     * @throws CorruptDataException if the data is damaged or not kompakt's
     * @throws MissingDictionaryException if it needs a dictionary that is not given
     * @throws LimitExceededException if it decodes to more than {@link ReadOptions#maxDecompressedLength()}
     * @throws KompaktUsageException if the file has several streams (use {@link KompaktFile})
     * @throws KompaktException for other failures
     */
    public static byte[] decompress(byte[] src, ReadOptions options) throws KompaktException {
        Objects.requireNonNull(src, "src");
        return decompress(src, 0, src.length, options);
    }

    /**
     * Decompresses the single-stream kompakt file in {@code src[offset, offset + length)}.
     *
     * @param src the array
     * @param offset where the file starts
     * @param length its length
     * @param options threads, dictionaries, the largest result (null: the defaults)
     * @return the data
     * @throws IndexOutOfBoundsException if the range is not inside {@code src}
     * @throws KompaktException as {@link #decompress(byte[], ReadOptions)}
     */
    public static byte[] decompress(byte[] src, int offset, int length, ReadOptions options) throws KompaktException {
        Objects.requireNonNull(src, "src");
        Objects.checkFromIndexSize(offset, length, src.length);
        ReadOptions o = options == null ? ReadOptions.DEFAULT : options;
        long[] dictionaries = o.acquireDictionaries();
        try {
            return Native.decompress(src, offset, length, o.threads(), o.maxDecompressedLength(), dictionaries);
        } finally {
            if (dictionaries != null) {
                o.releaseDictionaries();
            }
        }
    }

    /**
     * Decompresses the single-stream kompakt file in {@code src}'s remaining bytes into
     * {@code dst} at its position. Direct buffers are read and written in place. On success src
     * moves to its limit and dst past the data; on failure neither moves.
     *
     * @param src the file: position to limit
     * @param dst where the data goes
     * @param options threads and dictionaries (null: the defaults)
     * @return the bytes written to {@code dst}
     * @throws LimitExceededException if {@code dst} has too little room
     *     ({@link #decompressedLength(ByteBuffer)} tells how much is needed)
     * @throws ReadOnlyBufferException if {@code dst} is read-only
     * @throws KompaktException as {@link #decompress(byte[], ReadOptions)}
     */
    public static int decompress(ByteBuffer src, ByteBuffer dst, ReadOptions options) throws KompaktException {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        ReadOptions o = options == null ? ReadOptions.DEFAULT : options;
        int n;
        if (src.isDirect() && dst.isDirect()) {
            long[] dictionaries = o.acquireDictionaries();
            try {
                n = Native.decompressDirect(src, src.position(), src.remaining(), dst, dst.position(), dst.remaining(),
                        o.threads(), dictionaries);
            } finally {
                if (dictionaries != null) {
                    o.releaseDictionaries();
                }
            }
        } else {
            ReadOptions limited = o.toBuilder().maxDecompressedLength(dst.remaining()).build();
            byte[] data;
            try {
                if (src.hasArray()) {
                    data = decompress(src.array(), src.arrayOffset() + src.position(), src.remaining(), limited);
                } else {
                    byte[] copy = new byte[src.remaining()];
                    src.duplicate().get(copy);
                    data = decompress(copy, 0, copy.length, limited);
                }
            } catch (LimitExceededException e) {
                throw new LimitExceededException(e.getMessage() + "; the destination has room for "
                        + dst.remaining() + " bytes", e);
            }
            dst.duplicate().put(data);
            n = data.length;
        }
        src.position(src.limit());
        dst.position(dst.position() + n);
        return n;
    }

    /**
     * The length of the data a single-stream kompakt file decodes to, from its index (checked,
     * without decoding).
     *
     * @param src the file's bytes
     * @return the decoded length
     * @throws CorruptDataException if the bytes are not a complete kompakt file
     * @throws KompaktException for other failures
     */
    public static long decompressedLength(byte[] src) throws KompaktException {
        Objects.requireNonNull(src, "src");
        return Native.decompressedLength(src, 0, src.length);
    }

    /**
     * The same for a buffer's remaining bytes (its position does not move).
     *
     * @param src the file: position to limit
     * @return the decoded length
     * @throws KompaktException as {@link #decompressedLength(byte[])}
     */
    public static long decompressedLength(ByteBuffer src) throws KompaktException {
        Objects.requireNonNull(src, "src");
        if (src.isDirect()) {
            return Native.decompressedLengthDirect(src, src.position(), src.remaining());
        }
        if (src.hasArray()) {
            return Native.decompressedLength(src.array(), src.arrayOffset() + src.position(), src.remaining());
        }
        byte[] copy = new byte[src.remaining()];
        src.duplicate().get(copy);
        return Native.decompressedLength(copy, 0, copy.length);
    }
}
