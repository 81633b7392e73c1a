package dev.kompakt;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A kompakt table file (columnar, written by {@link KompaktTableWriter}, Python's
 * {@code kompakt.write_table} or R) open for reading, as Arrow vectors. Opening reads only the
 * file's index; a read decodes only the pages of the rows and columns it asks for.
 *
 * <pre>{@code
 * try (BufferAllocator allocator = new RootAllocator();
 *      KompaktTable table = KompaktTable.open("prices.kpk")) {
 *     try (VectorSchemaRoot rows = table.read(allocator, null, 0, 1000)) {           // all columns
 *         System.out.println(rows.contentToTSVString());
 *     }
 *     List<TableFilter> where = List.of(TableFilter.of("day", ">=", LocalDate.of(2024, 1, 1)));
 *     try (FilteredRead r = table.readWhere(allocator, null, 0, table.numRows(), where, false)) {
 *         System.out.println(r.rows().getRowCount() + " rows, " + r.groupsRead() + " groups read");
 *     }
 * }
 * }</pre>
 *
 * <p>Reads give the stored types ({@link #read}) or portable ones ({@link #readPortable}: types
 * every Arrow Java consumer, Spark's included, accepts: dictionaries decoded to their values,
 * unsigned integers widened to the next signed type (uint64 to decimal(20, 0)), float16 to
 * float32, date64 to date32, timestamps and durations in microseconds, fixed-size binary to
 * binary, large lists to lists; times of day have no such type and are refused, naming the
 * column). Every read returns a {@link TableBatch} that the caller closes, allocated from the
 * caller's allocator.
 *
 * <p>The schema, sizes, sort keys, metadata and column sizes are read when the table opens and
 * stay available after {@link #close()}. Calls are serialized (one at a time; a read decodes in
 * parallel on the table's threads). Reading from a closed table throws a
 * {@link KompaktUsageException}.
 */
public final class KompaktTable implements AutoCloseable {
    private final NativeHandle table;
    private final String path;
    private final Schema schema;
    /** Per column, the field of its values (a dictionary column: its dictionary's values). */
    private final List<Field> plainFields;
    private final Schema portableSchema;
    /** Why portable reads of every column are refused (a time column), or null. */
    private final String portableRefusal;
    private final long numRows;
    private final int rowsPerGroup;
    private final long numRowGroups;
    private final long fileSize;
    private final List<SortKey> sortKeys;
    private final Map<String, String> metadata;
    private final List<ColumnSize> columnSizes;

    private KompaktTable(long handle, String path, Info info) {
        this.path = path;
        this.schema = info.stored.schema();
        this.plainFields = info.stored.plainFields();
        this.portableSchema = info.portable;
        this.portableRefusal = info.portableRefusal;
        this.numRows = info.sizes[0];
        this.rowsPerGroup = (int) info.sizes[1];
        this.numRowGroups = info.sizes[2];
        this.fileSize = info.sizes[3];
        this.sortKeys = info.sortKeys;
        this.metadata = info.metadata;
        this.columnSizes = info.columnSizes;
        // Last, so that a failure above cannot free the handle twice.
        this.table = new NativeHandle(this, handle, Native::tableClose, "table");
    }

    /** What opening reads from the index, before the table object exists. */
    private static final class Info {
        TableArrow.Imported stored;
        Schema portable;
        String portableRefusal;
        long[] sizes;
        List<SortKey> sortKeys;
        Map<String, String> metadata;
        List<ColumnSize> columnSizes;

        static Info load(long h) throws KompaktException {
            Info info = new Info();
            info.sizes = Native.tableSizes(h);
            info.stored = TableArrow.importSchema(address -> Native.tableSchema(h, false, address));
            try {
                info.portable = TableArrow.importSchema(address -> Native.tableSchema(h, true, address)).schema();
            } catch (InvalidOptionException e) {
                info.portableRefusal = e.getMessage();
            }
            String[] sortColumns = Native.tableSortColumns(h);
            int[] flags = Native.tableSortFlags(h);
            List<SortKey> keys = new ArrayList<>();
            for (int i = 0; i < sortColumns.length; i++) {
                keys.add(SortKey.of(sortColumns[i], i < flags.length ? flags[i] : 0));
            }
            info.sortKeys = Collections.unmodifiableList(keys);
            String[] kv = Native.tableMetadata(h);
            Map<String, String> meta = new LinkedHashMap<>();
            for (int i = 0; i + 1 < kv.length; i += 2) {
                meta.put(kv[i], kv[i + 1]);
            }
            info.metadata = Collections.unmodifiableMap(meta);
            long[] sizes = Native.tableColumnSizes(h);
            List<Field> fields = info.stored.schema().getFields();
            List<ColumnSize> columns = new ArrayList<>();
            for (int c = 0; c < fields.size() && 2 * c + 1 < sizes.length; c++) {
                columns.add(new ColumnSize(fields.get(c).getName(), sizes[2 * c], sizes[2 * c + 1]));
            }
            info.columnSizes = Collections.unmodifiableList(columns);
            return info;
        }
    }

    /**
     * Opens a table file, reading on all cores.
     *
     * @param pathOrUrl a path, or a URL kompakt reads ({@code s3://bucket/key}, {@code https://...})
     * @return the open table
     * @throws KompaktIOException if it cannot be read
     * @throws CorruptDataException if it is not a table file or its index is damaged
     * @throws KompaktException for other failures
     */
    public static KompaktTable open(String pathOrUrl) throws KompaktException {
        return open(pathOrUrl, 0);
    }

    /**
     * Opens a table file.
     *
     * @param pathOrUrl a path or a URL, as {@link #open(String)}
     * @param threads threads decoding each read, 0 for all cores (up to 256)
     * @return the open table
     * @throws InvalidOptionException if {@code threads} is out of range
     * @throws KompaktException as {@link #open(String)}
     */
    public static KompaktTable open(String pathOrUrl, int threads) throws KompaktException {
        Objects.requireNonNull(pathOrUrl, "pathOrUrl");
        long h = Native.tableOpen(pathOrUrl, threads);
        try {
            return new KompaktTable(h, pathOrUrl, Info.load(h));
        } catch (KompaktException | RuntimeException | Error e) {
            Native.tableClose(h);
            throw e;
        }
    }

    /**
     * Opens a table file, reading on all cores.
     *
     * @param path the file
     * @return the open table
     * @throws KompaktException as {@link #open(String)}
     */
    public static KompaktTable open(Path path) throws KompaktException {
        Objects.requireNonNull(path, "path");
        return open(path.toString(), 0);
    }

    /**
     * The table files a location names, sorted: a folder's {@code *.kpk} files (not those whose
     * names start with {@code _} or {@code .}), the files a glob matches (local, or
     * {@code s3://} with patterns in folder and file names), or a file or URL as it is.
     *
     * @param location a folder, glob, file or URL
     * @return the files' paths or URLs
     * @throws KompaktIOException naming the location when nothing matches
     * @throws KompaktException for other failures (an object store's: {@link KompaktStoreException})
     */
    public static List<String> list(String location) throws KompaktException {
        Objects.requireNonNull(location, "location");
        return List.of(Native.tableList(location));
    }

    /**
     * The path or URL the table was opened with.
     *
     * @return it
     */
    public String path() {
        return path;
    }

    /**
     * The schema as stored: the types {@link #read} gives. A dictionary column's field is
     * dictionary-encoded (its type is the keys'; {@link TableBatch#lookup} gives the values).
     *
     * @return the schema
     */
    public Schema schema() {
        return schema;
    }

    /**
     * The schema of portable reads ({@link #readPortable}).
     *
     * @return the schema
     * @throws InvalidOptionException naming a column that has no portable type (a time of day)
     */
    public Schema portableSchema() {
        if (portableRefusal != null) {
            throw new InvalidOptionException(portableRefusal);
        }
        return portableSchema;
    }

    /**
     * The number of rows.
     *
     * @return rows
     */
    public long numRows() {
        return numRows;
    }

    /**
     * Rows per row group (the last group may hold fewer).
     *
     * @return rows per group
     */
    public int rowsPerGroup() {
        return rowsPerGroup;
    }

    /**
     * The number of row groups.
     *
     * @return groups
     */
    public long numRowGroups() {
        return numRowGroups;
    }

    /**
     * The file's size in bytes.
     *
     * @return bytes
     */
    public long fileSize() {
        return fileSize;
    }

    /**
     * The position of a column.
     *
     * @param name the column's name
     * @return its position, from 0
     * @throws InvalidOptionException naming the valid columns if there is none of that name
     */
    public int columnIndex(String name) {
        List<Field> fields = schema.getFields();
        for (int i = 0; i < fields.size(); i++) {
            if (fields.get(i).getName().equals(name)) {
                return i;
            }
        }
        List<String> names = new ArrayList<>();
        for (Field f : fields) {
            names.add(f.getName());
        }
        throw new InvalidOptionException("invalid column \"" + name + "\": one of " + names);
    }

    /**
     * The sort keys the table was written with, most significant first (empty: unsorted).
     *
     * @return the keys, unmodifiable
     */
    public List<SortKey> sortKeys() {
        return sortKeys;
    }

    /**
     * The user metadata written with the table.
     *
     * @return key to value, in the file's order, unmodifiable
     */
    public Map<String, String> metadata() {
        return metadata;
    }

    /**
     * Bytes per column, stored and decoded.
     *
     * @return one entry per column, in schema order, unmodifiable
     */
    public List<ColumnSize> columnSizes() {
        return columnSizes;
    }

    /**
     * The statistics of a column, one row per row group: {@code null_count} (uint64),
     * {@code min} and {@code max} (of the column's type; null where unknown).
     *
     * @param column the column's position
     * @param allocator allocates the result
     * @return the statistics (the caller closes them), or empty if the table has none for the column
     * @throws InvalidOptionException if there is no such column
     * @throws KompaktException if the index is damaged, or the table is closed
     */
    public synchronized Optional<VectorSchemaRoot> statistics(int column, BufferAllocator allocator)
            throws KompaktException {
        Objects.requireNonNull(allocator, "allocator");
        long h = table.acquire();
        try {
            return Optional.ofNullable(TableArrow.importBatch(allocator,
                    (s, a) -> Native.tableStatistics(h, column, s, a)));
        } finally {
            table.release();
        }
    }

    /**
     * Reads rows {@code [from, to)} of some columns, with their stored types.
     *
     * @param allocator allocates the result
     * @param columns column positions, in the order wanted (repeats allowed), or null for all
     * @param from the first row
     * @param to the row after the last, at most {@link #numRows()}
     * @return the rows (a {@link TableBatch}, which the caller closes)
     * @throws InvalidOptionException if a column or the range is out of bounds
     * @throws CorruptDataException if the data is damaged
     * @throws KompaktException for other failures, or if the table is closed
     */
    public VectorSchemaRoot read(BufferAllocator allocator, int[] columns, long from, long to)
            throws KompaktException {
        return read(allocator, columns, from, to, false);
    }

    /**
     * Reads rows {@code [from, to)} of some columns, with portable types (see the class).
     *
     * @param allocator allocates the result
     * @param columns column positions, or null for all
     * @param from the first row
     * @param to the row after the last
     * @return the rows (the caller closes them)
     * @throws InvalidOptionException if a column or the range is out of bounds, or a column has
     *     no portable type (a time of day; the message names it)
     * @throws KompaktException as {@link #read}
     */
    public VectorSchemaRoot readPortable(BufferAllocator allocator, int[] columns, long from, long to)
            throws KompaktException {
        return read(allocator, columns, from, to, true);
    }

    /**
     * Reads rows {@code [from, to)} of some columns with stored or portable types.
     *
     * @param allocator allocates the result
     * @param columns column positions, or null for all
     * @param from the first row
     * @param to the row after the last
     * @param portable portable types ({@link #readPortable}) instead of stored ones
     * @return the rows (the caller closes them)
     * @throws KompaktException as {@link #read} and {@link #readPortable}
     */
    public synchronized VectorSchemaRoot read(BufferAllocator allocator, int[] columns, long from, long to,
            boolean portable) throws KompaktException {
        Objects.requireNonNull(allocator, "allocator");
        int[] cols = copy(columns);
        long h = table.acquire();
        try {
            return TableArrow.importBatch(allocator, (s, a) -> {
                Native.tableRead(h, cols, from, to, portable, s, a);
                return true;
            });
        } finally {
            table.release();
        }
    }

    /**
     * Reads rows at positions {@code rows} (any order, repeats allowed), with stored types;
     * only the pages holding them are decoded.
     *
     * @param allocator allocates the result
     * @param columns column positions, or null for all
     * @param rows row numbers, each below {@link #numRows()}
     * @return the rows, in the order of {@code rows} (the caller closes them)
     * @throws InvalidOptionException if a column or row is out of bounds
     * @throws KompaktException as {@link #read}
     */
    public VectorSchemaRoot take(BufferAllocator allocator, int[] columns, long[] rows) throws KompaktException {
        return take(allocator, columns, rows, false);
    }

    /**
     * {@link #take(BufferAllocator, int[], long[])} with stored or portable types.
     *
     * @param allocator allocates the result
     * @param columns column positions, or null for all
     * @param rows row numbers
     * @param portable portable types instead of stored ones
     * @return the rows (the caller closes them)
     * @throws KompaktException as {@link #take(BufferAllocator, int[], long[])}
     */
    public synchronized VectorSchemaRoot take(BufferAllocator allocator, int[] columns, long[] rows,
            boolean portable) throws KompaktException {
        Objects.requireNonNull(allocator, "allocator");
        Objects.requireNonNull(rows, "rows");
        int[] cols = copy(columns);
        long[] which = rows.clone();
        long h = table.acquire();
        try {
            return TableArrow.importBatch(allocator, (s, a) -> {
                Native.tableTake(h, cols, which, portable, s, a);
                return true;
            });
        } finally {
            table.release();
        }
    }

    /**
     * Reads the rows of {@code [from, to)} that pass every filter. Only the row ranges the plan
     * leaves ({@link #plan}) are read; columns the filters compare but {@code columns} leaves
     * out are read for the filters and dropped.
     *
     * @param allocator allocates the result
     * @param columns column positions, or null for all
     * @param from the first row
     * @param to the row after the last
     * @param filters the filters (all must hold; empty: every row)
     * @param portable portable types instead of stored ones
     * @return the rows and what was read (the caller closes it)
     * @throws InvalidOptionException if a filter does not fit its column (naming it), or a column
     *     or the range is out of bounds
     * @throws KompaktException as {@link #read}
     */
    public synchronized FilteredRead readWhere(BufferAllocator allocator, int[] columns, long from, long to,
            List<TableFilter> filters, boolean portable) throws KompaktException {
        Objects.requireNonNull(allocator, "allocator");
        List<TableFilter> fs = List.copyOf(Objects.requireNonNull(filters, "filters"));
        String[] names = names(fs);
        String[] ops = ops(fs);
        int[] cols = copy(columns);
        long h = table.acquire();
        try {
            long[][] stats = new long[1][];
            TableBatch rows = TableArrow.exportFilterValues(plainFields, fs, (vs, va) ->
                    TableArrow.importBatch(allocator, (s, a) -> {
                        stats[0] = Native.tableReadWhere(h, cols, from, to, names, ops, vs, va, portable, s, a);
                        return true;
                    }));
            return new FilteredRead(rows, stats[0][0], stats[0][1], stats[0][2]);
        } finally {
            table.release();
        }
    }

    /**
     * The row ranges of {@code [from, to)} that may hold rows passing every filter: a binary
     * search on the first sort key if it is ascending, then the row groups' statistics. Rows
     * outside them fail some filter; rows inside still need the filters applied. Reads only the
     * index (and a few rows of the sort key).
     *
     * @param from the first row
     * @param to the row after the last
     * @param filters the filters (all must hold)
     * @return the ranges, in order, unmodifiable
     * @throws InvalidOptionException if a filter does not fit its column, or the range is out of bounds
     * @throws KompaktException if the data is damaged, or the table is closed
     */
    public synchronized List<RowRange> plan(long from, long to, List<TableFilter> filters) throws KompaktException {
        List<TableFilter> fs = List.copyOf(Objects.requireNonNull(filters, "filters"));
        String[] names = names(fs);
        String[] ops = ops(fs);
        long h = table.acquire();
        long[] ranges;
        try {
            ranges = TableArrow.exportFilterValues(plainFields, fs,
                    (vs, va) -> Native.tablePlan(h, from, to, names, ops, vs, va));
        } finally {
            table.release();
        }
        List<RowRange> out = new ArrayList<>(ranges.length / 2);
        for (int i = 0; i + 1 < ranges.length; i += 2) {
            out.add(new RowRange(ranges[i], ranges[i + 1]));
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * Whether {@link #plan} and {@link #readWhere} take a filter: its column exists and can be
     * compared, its op is known, it has one value for a comparison, and every value converts
     * exactly to the column's type. A caller that pushes filters down (Spark) keeps the others.
     *
     * @param filter the filter
     * @return true if it can be used
     */
    public boolean accepts(TableFilter filter) {
        if (filter == null) {
            return false;
        }
        try {
            Field field = TableArrow.fieldOf(plainFields, filter);
            if (field.getType().isComplex()) {
                return false;
            }
            TableArrow.filterValues(TableArrow.allocator(), field, filter).close();
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Decodes rows {@code [from, to)} of a fixed-width column (integers, floats, dates, times,
     * timestamps, durations, and booleans as one byte per row, 0 or 1; not decimals or
     * dictionaries) straight into a direct
     * buffer, in the machine's byte order, with no Arrow objects in between. Buffer positions do
     * not move.
     *
     * @param column the column's position
     * @param from the first row
     * @param to the row after the last
     * @param dst a direct buffer with room for the rows at its position (rows times the type's width)
     * @param validity null, or a direct buffer that gets one bit per row at its position, least
     *     significant first, set = valid (all set when no row is null)
     * @return whether any row is null (the values of null rows are unspecified)
     * @throws InvalidOptionException if the column is not fixed-width, a buffer is not direct
     *     or too small, or the range is out of bounds
     * @throws ReadOnlyBufferException if a buffer is read-only
     * @throws KompaktException if the data is damaged, or the table is closed
     */
    public synchronized boolean readInto(int column, long from, long to, ByteBuffer dst, ByteBuffer validity)
            throws KompaktException {
        Objects.requireNonNull(dst, "dst");
        checkRange(from, to);
        if (dst.isReadOnly() || (validity != null && validity.isReadOnly())) {
            throw new ReadOnlyBufferException();
        }
        if (!dst.isDirect() || (validity != null && !validity.isDirect())) {
            throw new InvalidOptionException("readInto: the buffers must be direct (ByteBuffer.allocateDirect)");
        }
        long rows = to - from;
        int width = column >= 0 && column < schema.getFields().size()
                ? TableArrow.fixedWidth(schema.getFields().get(column)) : -1;
        // An unknown width (or column) goes to Rust as it is, to be refused with its message.
        long length = width > 0 ? rows * width : dst.remaining();
        if (rows > Integer.MAX_VALUE / 8 || length > dst.remaining()) {
            throw new InvalidOptionException("readInto: " + rows + " rows of " + width + " bytes need " + length
                    + " bytes, the buffer has " + dst.remaining());
        }
        if (validity != null && (rows + 7) / 8 > validity.remaining()) {
            throw new InvalidOptionException("readInto: " + rows + " rows need " + (rows + 7) / 8
                    + " bytes of validity bits, the buffer has " + validity.remaining());
        }
        long h = table.acquire();
        try {
            return Native.tableReadInto(h, column, from, to, dst, dst.position(), (int) length, validity,
                    validity == null ? 0 : validity.position());
        } finally {
            table.release();
        }
    }

    /**
     * As {@link #readInto}, into raw memory (an off-heap column vector's): {@code dstLength}
     * bytes at {@code dstAddress}, and if {@code nullsAddress} is not 0 one byte per row there
     * (1 = null, 0 = not, Spark's {@code OffHeapColumnVector} layout). The memory must stay
     * allocated, and unused by others, during the call.
     *
     * @param column the column's position
     * @param from the first row
     * @param to the row after the last
     * @param dstAddress where the values go
     * @param dstLength bytes there: the rows times the type's width
     * @param nullsAddress where the null bytes go, or 0
     * @return the number of null rows
     * @throws InvalidOptionException if the column is not fixed-width, the length is wrong, or
     *     the range is out of bounds
     * @throws KompaktException if the data is damaged, or the table is closed
     */
    public synchronized long readIntoAddress(int column, long from, long to, long dstAddress, long dstLength,
            long nullsAddress) throws KompaktException {
        checkRange(from, to);
        if (dstAddress == 0 && to > from) {
            throw new InvalidOptionException("readIntoAddress: the destination address is 0");
        }
        long h = table.acquire();
        try {
            return Native.tableReadIntoAddress(h, column, from, to, dstAddress, dstLength, nullsAddress);
        } finally {
            table.release();
        }
    }

    private static void checkRange(long from, long to) {
        if (from < 0 || to < from) {
            throw new InvalidOptionException("invalid rows \"" + from + ".." + to
                    + "\": from 0 or more and to at least from");
        }
    }

    private static int[] copy(int[] columns) {
        return columns == null ? null : columns.clone();
    }

    private static String[] names(List<TableFilter> filters) {
        String[] out = new String[filters.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = filters.get(i).column();
        }
        return out;
    }

    private static String[] ops(List<TableFilter> filters) {
        String[] out = new String[filters.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = filters.get(i).op();
        }
        return out;
    }

    /** Closes the table; idempotent. Its schema, sizes and metadata stay available. */
    @Override
    public void close() {
        table.close();
    }

    @Override
    public String toString() {
        return "KompaktTable[" + path + ", " + numRows + " rows, " + schema.getFields().size() + " columns"
                + (table.isClosed() ? ", closed" : "") + "]";
    }
}
