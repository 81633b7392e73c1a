package dev.kompakt;

/**
 * What one column of a table costs: its bytes in the file and decoded (before compression).
 *
 * @param column the column's name
 * @param storedBytes bytes of its pages in the file
 * @param decodedBytes bytes of its pages once decoded
 */
public record ColumnSize(String column, long storedBytes, long decodedBytes) {
    /**
     * Decoded bytes per stored byte (0 for a column that stores nothing).
     *
     * @return the compression ratio
     */
    public double ratio() {
        return storedBytes == 0 ? 0 : (double) decodedBytes / storedBytes;
    }
}
