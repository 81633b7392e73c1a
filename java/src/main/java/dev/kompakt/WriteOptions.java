package dev.kompakt;

import java.util.Objects;

/**
 * How to compress: codec and level, block size, threads, filter for typed data, and a
 * dictionary. Immutable and thread-safe: build once, share everywhere.
 *
 * <pre>{@code
 * WriteOptions fast = WriteOptions.builder().codec("lz4").build();
 * WriteOptions small = WriteOptions.builder().codec("zstd").level(9).blockSize(4 << 20).build();
 * WriteOptions unified = WriteOptions.builder().level(60).build();          // 0 = store ... 100 = smallest
 * WriteOptions floats = WriteOptions.builder().typesize(8).filter("shuffle").build();
 * }</pre>
 *
 * <p>{@link Builder#build()} checks the options in kompakt's core, with the same rules and
 * messages as the command line and the Python and R packages; an invalid one is an
 * {@link InvalidOptionException} that names the valid values. Options left unset keep kompakt's
 * defaults: unified level 21 (zstd:1), 1 MiB blocks, all cores, the shuffle filter with element
 * size 1 (no effect).
 */
public final class WriteOptions {
    /** kompakt's defaults. */
    public static final WriteOptions DEFAULT = new WriteOptions(new Builder(), 0);

    private final String codec;
    private final Integer level;
    private final Integer threads;
    private final Long blockSize;
    private final String filter;
    private final Integer typesize;
    private final Dictionary dictionary;
    /** The options in Rust; null for DEFAULT, whose handle is 0 (Rust's defaults). */
    private final NativeHandle handle;
    /** The block size and thread count the options resolve to (-1: DEFAULT's, asked lazily). */
    private final int resolvedBlockSize;
    private final int resolvedThreads;

    private WriteOptions(Builder b, long handle) {
        this.codec = b.codec;
        this.level = b.level;
        this.threads = b.threads;
        this.blockSize = b.blockSize;
        this.filter = b.filter;
        this.typesize = b.typesize;
        this.dictionary = b.dictionary;
        this.handle = handle == 0 ? null : new NativeHandle(this, handle, Native::optionsFree, "write options");
        // Resolved by Rust, whose defaults they are; DEFAULT asks when first used, so that
        // loading this class does not load the native library.
        this.resolvedBlockSize = handle == 0 ? -1 : Native.optionsBlockSize(handle);
        this.resolvedThreads = handle == 0 ? -1 : Native.optionsThreads(handle);
    }

    /** kompakt's default block size and thread count, asked once. */
    private static final class Defaults {
        static final int BLOCK_SIZE = Native.optionsBlockSize(0);
        static final int THREADS = Native.optionsThreads(0);
    }

    /**
     * A builder with nothing set (kompakt's defaults).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder holding these options, to change some of them.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.codec = codec;
        b.level = level;
        b.threads = threads;
        b.blockSize = blockSize;
        b.filter = filter;
        b.typesize = typesize;
        b.dictionary = dictionary;
        return b;
    }

    /**
     * The codec as given ({@code "zstd:3"}, {@code "lz4"}, {@code "60"}), or null for the default.
     *
     * @return the codec spec or null
     */
    public String codec() {
        return codec;
    }

    /**
     * Raw bytes per block: as given, or kompakt's default (1 MiB).
     *
     * @return the block size in bytes
     */
    public int blockSize() {
        return resolvedBlockSize >= 0 ? resolvedBlockSize : Defaults.BLOCK_SIZE;
    }

    /**
     * Threads compressing: as given, or kompakt's default, 0 (all cores).
     *
     * @return the thread count, 0 for all cores
     */
    public int threads() {
        return resolvedThreads >= 0 ? resolvedThreads : Defaults.THREADS;
    }

    /**
     * The dictionary the options compress with, or null.
     *
     * @return the dictionary or null
     */
    public Dictionary dictionary() {
        return dictionary;
    }

    /** The handle for a native call: 0 for the defaults (paired with {@link #release()}). */
    long acquire() throws KompaktUsageException {
        return handle == null ? 0 : handle.acquire();
    }

    void release() {
        if (handle != null) {
            handle.release();
        }
    }

    /**
     * The options as kompakt's core sees them, e.g.
     * {@code codec zstd:1, 1024 KiB blocks, filter shuffle, typesize 1, threads all}.
     */
    @Override
    public String toString() {
        try {
            long h = acquire();
            try {
                return Native.optionsDescribe(h);
            } finally {
                release();
            }
        } catch (KompaktUsageException e) {
            return "WriteOptions[closed]";
        }
    }

    /**
     * Builds {@link WriteOptions}. Setters return the builder; nothing is checked until
     * {@link #build()}.
     */
    public static final class Builder {
        private String codec;
        private Integer level;
        private Integer threads;
        private Long blockSize;
        private String filter;
        private Integer typesize;
        private Dictionary dictionary;

        private Builder() {}

        /**
         * The codec: {@code none}, {@code auto} (chosen per block), {@code lz4[:ACCEL]},
         * {@code lz4hc[:1-12]}, {@code zstd[:-50..22]}, {@code gzip[:1-9]}, {@code zlib[:1-9]}, or a
         * unified level {@code "0"}-{@code "100"}.
         *
         * @param codec the spec, or null for the default
         * @return this builder
         */
        public Builder codec(String codec) {
            this.codec = codec;
            return this;
        }

        /**
         * Alone, a unified level 0-100 (0 = store raw, 100 = smallest); with a bare codec name
         * ({@code codec("zstd")}), that codec's own level ({@code zstd} and 9 is {@code zstd:9}).
         *
         * @param level the level
         * @return this builder
         */
        public Builder level(int level) {
            this.level = level;
            return this;
        }

        /**
         * Threads that compress the blocks of one stream or call (0 = all cores); the output
         * does not depend on it.
         *
         * @param threads 0-256
         * @return this builder
         */
        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        /**
         * Raw bytes per block, 64 KiB to 64 MiB (default 1 MiB). Smaller blocks use less memory
         * and make random reads cheaper; larger ones compress a little better.
         *
         * @param blockSize bytes
         * @return this builder
         */
        public Builder blockSize(int blockSize) {
            return blockSize((long) blockSize);
        }

        /**
         * {@link #blockSize(int)} of a size as configuration gives it (Spark's sizes are longs);
         * {@link #build()} checks it.
         *
         * @param blockSize bytes
         * @return this builder
         */
        public Builder blockSize(long blockSize) {
            this.blockSize = blockSize;
            return this;
        }

        /**
         * The filter for typed data: {@code none}, {@code shuffle}, {@code delta} (sorted
         * integers) or {@code auto} (chosen per block); used with {@link #typesize(int)}.
         *
         * @param filter the filter, or null for the default (shuffle)
         * @return this builder
         */
        public Builder filter(String filter) {
            this.filter = filter;
            return this;
        }

        /**
         * The element size of the data in bytes (8 for doubles or longs), 1-255: turns on the
         * filter.
         *
         * @param typesize bytes per element
         * @return this builder
         */
        public Builder typesize(int typesize) {
            this.typesize = typesize;
            return this;
        }

        /**
         * Compresses with a zstd dictionary (the codec must then be zstd; default zstd:3).
         * The options keep their own reference: the dictionary may be closed afterwards.
         *
         * @param dictionary the dictionary, or null for none
         * @return this builder
         */
        public Builder dictionary(Dictionary dictionary) {
            this.dictionary = dictionary;
            return this;
        }

        /**
         * Checks the options and builds them.
         *
         * @return the options
         * @throws InvalidOptionException if an option is invalid (the message names the valid values)
         * @throws IllegalStateException if the dictionary is closed
         */
        public WriteOptions build() {
            long dict = 0;
            if (dictionary != null) {
                try {
                    dict = dictionary.acquire();
                } catch (KompaktUsageException e) {
                    throw new IllegalStateException("the dictionary " + dictionary.id() + " is closed", e);
                }
            }
            try {
                long h = Native.optionsNew(codec, given(level), given(threads), given(blockSize), filter,
                        given(typesize), dict);
                return new WriteOptions(this, h);
            } finally {
                if (dictionary != null) {
                    dictionary.release();
                }
            }
        }

        private static long given(Long n) {
            return n == null ? Native.NOT_GIVEN : n;
        }

        private static long given(Integer n) {
            return n == null ? Native.NOT_GIVEN : n;
        }

        @Override
        public String toString() {
            return "WriteOptions.Builder[codec=" + codec + ", level=" + level + ", threads=" + threads
                    + ", blockSize=" + blockSize + ", filter=" + filter + ", typesize=" + typesize
                    + ", dictionary=" + (dictionary == null ? null : dictionary.id()) + "]";
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof WriteOptions)) {
            return false;
        }
        WriteOptions w = (WriteOptions) o;
        return Objects.equals(codec, w.codec) && Objects.equals(level, w.level) && Objects.equals(threads, w.threads)
                && Objects.equals(blockSize, w.blockSize) && Objects.equals(filter, w.filter)
                && Objects.equals(typesize, w.typesize) && dictionary == w.dictionary;
    }

    @Override
    public int hashCode() {
        return Objects.hash(codec, level, threads, blockSize, filter, typesize, System.identityHashCode(dictionary));
    }
}
