package dev.kompakt;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Objects;

/**
 * A zstd dictionary: compresses many small values that look alike (JSON records, log lines) far
 * better than each alone. Data compressed with one needs it again to decompress; without it,
 * decompressing throws a {@link MissingDictionaryException} naming its {@link #id()}.
 *
 * <pre>{@code
 * try (Dictionary dict = Dictionary.train(samples, 16 * 1024)) {
 *     WriteOptions opts = WriteOptions.builder().codec("zstd:3").dictionary(dict).build();
 *     byte[] packed = Kompakt.compress(record, opts);
 *     byte[] back = Kompakt.decompress(packed, ReadOptions.builder().dictionaries(dict).build());
 *     dict.save(Path.of("records.kpkd"));   // readable by kompakt's CLI, Python and R
 * }
 * }</pre>
 *
 * Its bytes are the {@code .kpkd} files that {@code kompakt train-dict} and the Python and R
 * packages write. Options and read options built with a dictionary keep their own reference to
 * it in Rust, so closing it afterwards does not affect them. Thread-safe; {@link #close()} frees
 * its memory (the garbage collector does too, later, if it is not closed).
 */
public final class Dictionary implements AutoCloseable {
    private final NativeHandle handle;
    private final String id;

    private Dictionary(long handle) throws KompaktUsageException {
        this.handle = new NativeHandle(this, handle, Native::dictionaryFree, "dictionary");
        long h = this.handle.acquire();
        try {
            this.id = Native.dictionaryId(h);
        } finally {
            this.handle.release();
        }
    }

    /**
     * Trains a dictionary on samples of the data it will compress.
     *
     * @param samples typical values (hundreds or more work best), none null
     * @param maxSize the dictionary's largest size in bytes (e.g. 16 KiB to 110 KiB)
     * @return the dictionary
     * @throws InvalidOptionException if there are too few samples or the size is invalid
     * @throws KompaktException if training fails
     */
    public static Dictionary train(List<byte[]> samples, int maxSize) throws KompaktException {
        Objects.requireNonNull(samples, "samples");
        byte[][] all = samples.toArray(new byte[0][]);
        for (int i = 0; i < all.length; i++) {
            Objects.requireNonNull(all[i], "sample " + i);
        }
        return new Dictionary(Native.dictionaryTrain(all, maxSize));
    }

    /**
     * A dictionary from its bytes (a {@code .kpkd} file's content, or {@link #bytes()}).
     *
     * @param bytes the dictionary
     * @return the dictionary
     * @throws KompaktException if the bytes are not a dictionary
     */
    public static Dictionary load(byte[] bytes) throws KompaktException {
        Objects.requireNonNull(bytes, "bytes");
        return new Dictionary(Native.dictionaryLoad(bytes, 0, bytes.length));
    }

    /**
     * A dictionary from a {@code .kpkd} file.
     *
     * @param path the file
     * @return the dictionary
     * @throws IOException if the file cannot be read or is not a dictionary
     */
    public static Dictionary load(Path path) throws IOException {
        Objects.requireNonNull(path, "path");
        return load(Files.readAllBytes(path));
    }

    /**
     * The dictionary's bytes, as a {@code .kpkd} file holds them.
     *
     * @return a new array
     * @throws KompaktUsageException if it is closed
     */
    public byte[] bytes() throws KompaktUsageException {
        long h = handle.acquire();
        try {
            return Native.dictionaryBytes(h);
        } finally {
            handle.release();
        }
    }

    /**
     * Its id, as files compressed with it record it and as a {@link MissingDictionaryException}
     * names it.
     *
     * @return the id
     */
    public String id() {
        return id;
    }

    /**
     * Writes {@link #bytes()} to a {@code .kpkd} file (through a temporary file beside it, so
     * the file appears whole or not at all).
     *
     * @param path the file, replaced if it exists
     * @throws IOException if it cannot be written
     */
    public void save(Path path) throws IOException {
        Objects.requireNonNull(path, "path");
        Path absolute = path.toAbsolutePath();
        Path tmp = Files.createTempFile(absolute.getParent(), "." + absolute.getFileName(), ".tmp");
        try {
            Files.write(tmp, bytes());
            Files.move(tmp, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** The handle for a native call (paired with {@link #release()}). */
    long acquire() throws KompaktUsageException {
        return handle.acquire();
    }

    void release() {
        handle.release();
    }

    /** Frees the dictionary; idempotent. Options and readers built with it keep working. */
    @Override
    public void close() {
        handle.close();
    }

    @Override
    public String toString() {
        return "Dictionary[" + id + "]";
    }
}
