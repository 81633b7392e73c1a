package dev.kompakt;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How to write a table: codec and level of its pages, the codec of plain string pages, threads,
 * rows per row group, sort keys and user metadata. Immutable and thread-safe: build once, share
 * everywhere.
 *
 * <pre>{@code
 * TableWriteOptions opts = TableWriteOptions.builder()
 *         .codec("zstd").level(3)
 *         .rowsPerGroup(65_536)
 *         .sortedBy("day", "city")                       // the rows are in this order
 *         .metadata(Map.of("source", "prices feed"))
 *         .build();
 * }</pre>
 *
 * <p>{@link Builder#build()} checks the options in kompakt's core, with the rules and messages
 * Python and R write tables with; an invalid one is an {@link InvalidOptionException} naming the
 * option and its valid values. Options left unset keep kompakt's defaults. The options hold a
 * native handle, freed when they become unreachable.
 */
public final class TableWriteOptions {
    private final String codec;
    private final Integer level;
    private final String stringCodec;
    private final Integer threads;
    private final Integer rowsPerGroup;
    private final List<SortKey> sortedBy;
    private final Map<String, String> metadata;
    private final NativeHandle handle;

    private TableWriteOptions(Builder b, long handle) {
        this.codec = b.codec;
        this.level = b.level;
        this.stringCodec = b.stringCodec;
        this.threads = b.threads;
        this.rowsPerGroup = b.rowsPerGroup;
        this.sortedBy = Collections.unmodifiableList(new ArrayList<>(b.sortedBy));
        this.metadata = Collections.unmodifiableMap(new LinkedHashMap<>(b.metadata));
        this.handle = new NativeHandle(this, handle, Native::tableOptionsFree, "table write options");
    }

    /** Built when first used, so that loading this class does not load the native library. */
    private static final class Defaults {
        static final TableWriteOptions DEFAULTS = builder().build();
    }

    /**
     * kompakt's defaults.
     *
     * @return the default options (one shared instance)
     */
    public static TableWriteOptions defaults() {
        return Defaults.DEFAULTS;
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
        b.stringCodec = stringCodec;
        b.threads = threads;
        b.rowsPerGroup = rowsPerGroup;
        b.sortedBy = new ArrayList<>(sortedBy);
        b.metadata = new LinkedHashMap<>(metadata);
        return b;
    }

    /**
     * The sort keys, most significant first (empty: unsorted).
     *
     * @return the keys, unmodifiable
     */
    public List<SortKey> sortedBy() {
        return sortedBy;
    }

    /**
     * The user metadata.
     *
     * @return key to value, unmodifiable
     */
    public Map<String, String> metadata() {
        return metadata;
    }

    /** The handle for a native call (paired with {@link #release()}). */
    long acquire() throws KompaktUsageException {
        return handle.acquire();
    }

    void release() {
        handle.release();
    }

    @Override
    public String toString() {
        return "TableWriteOptions[codec=" + codec + ", level=" + level + ", stringCodec=" + stringCodec
                + ", threads=" + threads + ", rowsPerGroup=" + rowsPerGroup + ", sortedBy=" + sortedBy
                + ", metadata=" + metadata + "]";
    }

    /**
     * Builds {@link TableWriteOptions}. Setters return the builder; nothing is checked until
     * {@link #build()}.
     */
    public static final class Builder {
        private String codec;
        private Integer level;
        private String stringCodec;
        private Integer threads;
        private Integer rowsPerGroup;
        private List<SortKey> sortedBy = new ArrayList<>();
        private Map<String, String> metadata = new LinkedHashMap<>();

        private Builder() {}

        /**
         * The codec of every page: a spec such as {@code zstd}, {@code zstd:3}, {@code lz4},
         * {@code none}, as Python's and R's {@code write_table} take it.
         *
         * @param codec the spec, or null for the default
         * @return this builder
         */
        public Builder codec(String codec) {
            this.codec = codec;
            return this;
        }

        /**
         * Alone, a unified level 0-100 (0 = store raw, 100 = smallest); with a bare codec name,
         * that codec's own level.
         *
         * @param level the level
         * @return this builder
         */
        public Builder level(int level) {
            this.level = level;
            return this;
        }

        /**
         * The codec of plain (not dictionary-encoded) string pages, if it should differ.
         *
         * @param stringCodec a codec spec, or null for the pages' codec
         * @return this builder
         */
        public Builder stringCodec(String stringCodec) {
            this.stringCodec = stringCodec;
            return this;
        }

        /**
         * Threads encoding the pages (0 = all cores); the file does not depend on it.
         *
         * @param threads 0-256
         * @return this builder
         */
        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        /**
         * Rows per row group: the unit of reads, statistics and filtering.
         *
         * @param rowsPerGroup rows
         * @return this builder
         */
        public Builder rowsPerGroup(int rowsPerGroup) {
            this.rowsPerGroup = rowsPerGroup;
            return this;
        }

        /**
         * Ascending sort keys (nulls last): the rows written are in this order, which lets
         * filters on the first key find their rows by binary search. Replaces earlier keys.
         *
         * @param columns the columns, most significant first
         * @return this builder
         */
        public Builder sortedBy(String... columns) {
            List<SortKey> keys = new ArrayList<>();
            for (String c : columns) {
                keys.add(SortKey.ascending(c));
            }
            this.sortedBy = keys;
            return this;
        }

        /**
         * Sort keys with their directions. Replaces earlier keys.
         *
         * @param keys the keys, most significant first
         * @return this builder
         */
        public Builder sortedBy(SortKey... keys) {
            for (SortKey k : keys) {
                Objects.requireNonNull(k, "sort key");
            }
            this.sortedBy = new ArrayList<>(Arrays.asList(keys));
            return this;
        }

        /**
         * User metadata stored with the table ({@link KompaktTable#metadata()}). Replaces
         * earlier metadata.
         *
         * @param metadata key to value (copied; iteration order kept)
         * @return this builder
         */
        public Builder metadata(Map<String, String> metadata) {
            this.metadata = new LinkedHashMap<>(Objects.requireNonNull(metadata, "metadata"));
            return this;
        }

        /**
         * Checks the options and builds them.
         *
         * @return the options
         * @throws InvalidOptionException if an option is invalid (the message names it and the valid values)
         */
        public TableWriteOptions build() {
            String[] sortColumns = null;
            int[] sortFlags = null;
            if (!sortedBy.isEmpty()) {
                sortColumns = new String[sortedBy.size()];
                sortFlags = new int[sortedBy.size()];
                for (int i = 0; i < sortColumns.length; i++) {
                    sortColumns[i] = sortedBy.get(i).column();
                    sortFlags[i] = sortedBy.get(i).flags();
                }
            }
            String[] meta = null;
            if (!metadata.isEmpty()) {
                meta = new String[2 * metadata.size()];
                int i = 0;
                for (Map.Entry<String, String> e : metadata.entrySet()) {
                    meta[i++] = Objects.requireNonNull(e.getKey(), "metadata key");
                    meta[i++] = Objects.requireNonNull(e.getValue(), "metadata value");
                }
            }
            long h = Native.tableOptionsNew(codec, given(level), stringCodec, given(threads), given(rowsPerGroup),
                    sortColumns, sortFlags, meta);
            return new TableWriteOptions(this, h);
        }

        private static long given(Integer n) {
            return n == null ? Native.NOT_GIVEN : n;
        }
    }
}
