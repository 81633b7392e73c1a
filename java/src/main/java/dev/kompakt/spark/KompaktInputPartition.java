package dev.kompakt.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * Rows of one table file a task reads: ranges (from, to, from, to, ...) of whole row groups, or
 * of the rows in them that pushed filters may keep.
 */
record KompaktInputPartition(String path, long[] ranges, int rowsPerGroup) implements InputPartition {
    private static final long serialVersionUID = 1L;
}
