package dev.kompakt;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * How to decompress: threads, the zstd dictionaries data may need, and the largest result a
 * {@code byte[]} method may return. Immutable and thread-safe.
 *
 * <pre>{@code
 * ReadOptions opts = ReadOptions.builder().threads(4).dictionaries(dict).build();
 * byte[] data = Kompakt.decompress(packed, opts);
 * }</pre>
 *
 * The dictionaries are used, not copied: keep them open while these options are used.
 */
public final class ReadOptions {
    /** The largest {@code byte[]} the JVM allocates: {@code Integer.MAX_VALUE - 8}. */
    public static final int MAX_ARRAY_LENGTH = Integer.MAX_VALUE - 8;

    /** All cores, no dictionaries, results up to {@link #MAX_ARRAY_LENGTH} bytes. */
    public static final ReadOptions DEFAULT = builder().build();

    private final int threads;
    private final Dictionary[] dictionaries;
    private final long maxDecompressedLength;

    private ReadOptions(Builder b) {
        this.threads = b.threads;
        this.dictionaries = b.dictionaries;
        this.maxDecompressedLength = b.maxDecompressedLength;
    }

    /**
     * A builder with the defaults.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder holding these options.
     *
     * @return a new builder
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.threads = threads;
        b.dictionaries = dictionaries;
        b.maxDecompressedLength = maxDecompressedLength;
        return b;
    }

    /**
     * Threads decoding (0 = all cores).
     *
     * @return the thread count
     */
    public int threads() {
        return threads;
    }

    /**
     * The dictionaries data may need.
     *
     * @return an unmodifiable list
     */
    public List<Dictionary> dictionaries() {
        return List.of(dictionaries);
    }

    /**
     * The most bytes {@link Kompakt#decompress(byte[], ReadOptions)} and
     * {@link KompaktFile#readFully(int)} return; more is a {@link LimitExceededException}
     * (before anything is allocated). A guard against data that decodes to far more than
     * expected.
     *
     * @return bytes
     */
    public long maxDecompressedLength() {
        return maxDecompressedLength;
    }

    /**
     * The dictionaries' handles for a native call, each counted in use; null for none. Paired
     * with {@link #releaseDictionaries()}.
     */
    long[] acquireDictionaries() throws KompaktUsageException {
        if (dictionaries.length == 0) {
            return null;
        }
        long[] handles = new long[dictionaries.length];
        int n = 0;
        try {
            for (; n < dictionaries.length; n++) {
                handles[n] = dictionaries[n].acquire();
            }
        } finally {
            if (n < dictionaries.length) {
                for (int i = 0; i < n; i++) {
                    dictionaries[i].release();
                }
            }
        }
        return handles;
    }

    void releaseDictionaries() {
        for (Dictionary d : dictionaries) {
            d.release();
        }
    }

    @Override
    public String toString() {
        StringBuilder ids = new StringBuilder();
        for (Dictionary d : dictionaries) {
            ids.append(ids.length() == 0 ? "" : ", ").append(d.id());
        }
        return "ReadOptions[threads=" + (threads == 0 ? "all" : threads) + ", dictionaries=[" + ids
                + "], maxDecompressedLength=" + maxDecompressedLength + "]";
    }

    /** Builds {@link ReadOptions}. */
    public static final class Builder {
        private int threads;
        private Dictionary[] dictionaries = new Dictionary[0];
        private long maxDecompressedLength = MAX_ARRAY_LENGTH;

        private Builder() {}

        /**
         * Threads decoding the blocks (0 = all cores, the default; checked when used: 0-256).
         *
         * @param threads the count
         * @return this builder
         */
        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        /**
         * The zstd dictionaries that data may need (each file names the one it was written with).
         *
         * @param dictionaries the dictionaries, none null
         * @return this builder
         */
        public Builder dictionaries(Dictionary... dictionaries) {
            Objects.requireNonNull(dictionaries, "dictionaries");
            Dictionary[] copy = dictionaries.clone();
            for (Dictionary d : copy) {
                Objects.requireNonNull(d, "a dictionary is null");
            }
            this.dictionaries = copy;
            return this;
        }

        /**
         * The same, from a list.
         *
         * @param dictionaries the dictionaries, none null
         * @return this builder
         */
        public Builder dictionaries(List<Dictionary> dictionaries) {
            return dictionaries(dictionaries.toArray(new Dictionary[0]));
        }

        /**
         * The most bytes a method returning a {@code byte[]} may return (default
         * {@link ReadOptions#MAX_ARRAY_LENGTH}).
         *
         * @param maxDecompressedLength bytes, 0 or more
         * @return this builder
         */
        public Builder maxDecompressedLength(long maxDecompressedLength) {
            if (maxDecompressedLength < 0) {
                throw new InvalidOptionException(
                        "invalid maxDecompressedLength \"" + maxDecompressedLength + "\": 0 or more bytes");
            }
            this.maxDecompressedLength = Math.min(maxDecompressedLength, MAX_ARRAY_LENGTH);
            return this;
        }

        /**
         * The options.
         *
         * @return the options
         */
        public ReadOptions build() {
            return new ReadOptions(this);
        }

        @Override
        public String toString() {
            return "ReadOptions.Builder[threads=" + threads + ", dictionaries=" + Arrays.toString(dictionaries)
                    + ", maxDecompressedLength=" + maxDecompressedLength + "]";
        }
    }
}
