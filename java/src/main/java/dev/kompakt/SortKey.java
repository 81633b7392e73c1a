package dev.kompakt;

import java.util.Objects;

/**
 * One sort key of a table: the rows are in the order of this column (after the keys before it),
 * as written by {@link TableWriteOptions.Builder#sortedBy(SortKey...)} and reported by
 * {@link KompaktTable#sortKeys()}.
 *
 * @param column the column's name
 * @param descending whether larger values come first
 * @param nullsFirst whether null rows come before the others
 */
public record SortKey(String column, boolean descending, boolean nullsFirst) {
    /**
     * Checks the column name.
     *
     * @throws NullPointerException if {@code column} is null
     */
    public SortKey {
        Objects.requireNonNull(column, "column");
    }

    /**
     * An ascending key, nulls last (the order of {@code sortedBy(String...)}).
     *
     * @param column the column's name
     * @return the key
     */
    public static SortKey ascending(String column) {
        return new SortKey(column, false, false);
    }

    /**
     * A descending key, nulls last.
     *
     * @param column the column's name
     * @return the key
     */
    public static SortKey descending(String column) {
        return new SortKey(column, true, false);
    }

    /** The native flags: 1 if descending, plus 2 if nulls come first. */
    int flags() {
        return (descending ? 1 : 0) | (nullsFirst ? 2 : 0);
    }

    /** A key from its native flags. */
    static SortKey of(String column, int flags) {
        return new SortKey(column, (flags & 1) != 0, (flags & 2) != 0);
    }
}
