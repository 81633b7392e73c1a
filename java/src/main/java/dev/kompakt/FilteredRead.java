package dev.kompakt;

import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The result of {@link KompaktTable#readWhere}: the rows that passed the filters and what it
 * took to find them. Closing it closes the rows.
 *
 * @param rows the rows that pass every filter, in table order (the caller closes them)
 * @param groupsRead row groups whose pages were read
 * @param groupsTotal row groups in the table
 * @param rowsScanned rows read and compared with the filters
 */
public record FilteredRead(VectorSchemaRoot rows, long groupsRead, long groupsTotal, long rowsScanned)
        implements AutoCloseable {
    /** Closes the rows (and the dictionaries they hold). */
    @Override
    public void close() {
        rows.close();
    }
}
