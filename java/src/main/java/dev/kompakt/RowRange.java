package dev.kompakt;

/**
 * Rows {@code [from, to)} of a table, as {@link KompaktTable#plan} gives them.
 *
 * @param from the first row
 * @param to the row after the last
 */
public record RowRange(long from, long to) {
    /**
     * Checks the range.
     *
     * @throws IllegalArgumentException if {@code from} is negative or past {@code to}
     */
    public RowRange {
        if (from < 0 || from > to) {
            throw new IllegalArgumentException("not a row range: [" + from + ", " + to + ")");
        }
    }

    /**
     * The rows in the range.
     *
     * @return {@code to - from}
     */
    public long rows() {
        return to - from;
    }
}
