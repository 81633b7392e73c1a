package dev.kompakt.spark;

import dev.kompakt.KompaktTable;
import dev.kompakt.TableBatch;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Reads one input partition as a {@link ColumnarBatch} per row group (or the part of it in a
 * range). Fixed-width columns stored as Spark holds them are decoded by Rust straight into
 * Spark's off-heap vectors; the others come through Arrow ({@link ArrowColumnVector}). All Arrow
 * memory comes from this reader's allocator, closed (and checked empty) at the end.
 */
final class KompaktBatchReader implements PartitionReader<ColumnarBatch> {
    private final KompaktInputPartition partition;
    private final StructType schema;
    private final int limit;
    private final int threads;

    private KompaktTable table;
    private BufferAllocator allocator;
    /** Per column of the schema: its position in the file. */
    private int[] fileColumns;
    /** Per column: bytes per value when decoded straight into an off-heap vector, else 0. */
    private int[] widths;
    private OffHeapColumnVector[] offHeap;
    /** One byte per row (1 = null), where Rust marks the nulls of a direct column. */
    private ArrowBuf nullBytes;
    /** The file columns read through Arrow, and their places in the schema. */
    private int[] arrowColumns;
    private int[] arrowSlots;
    /**
     * Dictionary-encoded string and binary columns (R factors, pandas categoricals): their keys
     * go into Spark's dictionary ids and their values into a {@link KeyedValues} dictionary,
     * as Spark's Parquet reader keeps dictionary pages, rather than decoded row by row.
     */
    private int[] keyedColumns;
    private int[] keyedSlots;
    private KeyedValues[] keyedValues;
    private VectorSchemaRoot keys;

    private VectorSchemaRoot current;
    private ColumnarBatch batch;
    private int range;
    private long position = -1;
    private long emitted;
    private long lastGroup = -1;
    private long groupsRead;
    private long rowsRead;

    KompaktBatchReader(KompaktInputPartition partition, StructType schema, int limit, int threads) {
        this.partition = partition;
        this.schema = schema;
        this.limit = limit;
        this.threads = threads;
    }

    private void open() throws IOException {
        allocator = ArrowUtils.rootAllocator().newChildAllocator("kompakt " + partition.path(), 0, Long.MAX_VALUE);
        table = KompaktTable.open(partition.path(), threads);
        StructField[] fields = schema.fields();
        List<Field> stored = table.schema().getFields();
        List<Field> portable = table.portableSchema().getFields();
        long rpg = Math.max(1, partition.rowsPerGroup());
        long longest = 0;
        long[] ranges = partition.ranges();
        for (int i = 0; i + 1 < ranges.length; i += 2) {
            longest = Math.max(longest, ranges[i + 1] - ranges[i]);
        }
        int capacity = (int) Math.max(1, Math.min(Math.min(rpg, longest), limit >= 0 ? Math.max(1, limit) : Long.MAX_VALUE));

        fileColumns = new int[fields.length];
        widths = new int[fields.length];
        offHeap = new OffHeapColumnVector[fields.length];
        List<Integer> viaArrow = new ArrayList<>();
        List<Integer> keyed = new ArrayList<>();
        boolean anyNullable = false;
        for (int i = 0; i < fields.length; i++) {
            int c = table.columnIndex(fields[i].name());
            fileColumns[i] = c;
            Field s = stored.get(c);
            Field p = portable.get(c);
            widths[i] = s.getDictionary() == null && s.getType().equals(p.getType()) ? directWidth(p.getType()) : 0;
            if (widths[i] > 0) {
                offHeap[i] = new OffHeapColumnVector(capacity, fields[i].dataType());
                anyNullable |= s.isNullable();
            } else if (s.getDictionary() != null && KeyedValues.holds(p.getType())) {
                offHeap[i] = new OffHeapColumnVector(capacity, fields[i].dataType());
                keyed.add(i);
            } else {
                viaArrow.add(i);
            }
        }
        keyedSlots = keyed.stream().mapToInt(Integer::intValue).toArray();
        keyedColumns = new int[keyedSlots.length];
        for (int k = 0; k < keyedSlots.length; k++) {
            keyedColumns[k] = fileColumns[keyedSlots[k]];
        }
        keyedValues = new KeyedValues[keyedSlots.length];
        if (anyNullable) {
            nullBytes = allocator.buffer(capacity);
        }
        arrowSlots = viaArrow.stream().mapToInt(Integer::intValue).toArray();
        arrowColumns = new int[arrowSlots.length];
        for (int k = 0; k < arrowSlots.length; k++) {
            arrowColumns[k] = fileColumns[arrowSlots[k]];
        }
    }

    /** The width of a type Spark's off-heap vectors hold in the same layout, else 0. */
    private static int directWidth(ArrowType t) {
        switch (t.getTypeID()) {
            case Int: {
                ArrowType.Int i = (ArrowType.Int) t;
                return i.getIsSigned() ? i.getBitWidth() / 8 : 0;
            }
            case FloatingPoint: {
                FloatingPointPrecision p = ((ArrowType.FloatingPoint) t).getPrecision();
                return p == FloatingPointPrecision.SINGLE ? 4 : p == FloatingPointPrecision.DOUBLE ? 8 : 0;
            }
            case Date:
                return ((ArrowType.Date) t).getUnit() == DateUnit.DAY ? 4 : 0;
            case Timestamp:
                return ((ArrowType.Timestamp) t).getUnit() == TimeUnit.MICROSECOND ? 8 : 0;
            case Bool:
                // Spark keeps a byte per boolean; Rust unpacks the bits into them.
                return 1;
            default:
                return 0;
        }
    }

    @Override
    public boolean next() throws IOException {
        if (table == null) {
            open();
        }
        closeBatch();
        if (limit >= 0 && emitted >= limit) {
            return false;
        }
        long[] ranges = partition.ranges();
        while (true) {
            if (2 * range + 1 >= ranges.length) {
                return false;
            }
            position = Math.max(position, ranges[2 * range]);
            if (position < ranges[2 * range + 1]) {
                break;
            }
            range++;
        }
        long rpg = Math.max(1, partition.rowsPerGroup());
        long from = position;
        long to = Math.min(ranges[2 * range + 1], (from / rpg + 1) * rpg);
        if (limit >= 0) {
            to = Math.min(to, from + (limit - emitted));
        }
        batch = read(from, to);
        position = to;
        emitted += to - from;
        rowsRead += to - from;
        long group = from / rpg;
        if (group != lastGroup) {
            lastGroup = group;
            groupsRead++;
            KompaktScan.ROW_GROUPS_READ.incrementAndGet();
        }
        return true;
    }

    private ColumnarBatch read(long from, long to) throws IOException {
        int n = (int) (to - from);
        ColumnVector[] columns = new ColumnVector[widths.length];
        for (int i = 0; i < widths.length; i++) {
            if (widths[i] == 0) {
                continue;
            }
            OffHeapColumnVector v = offHeap[i];
            // As Spark's Parquet reader leaves a vector: reset (all not null), then the nulls
            // marked with putNulls, which keeps numNulls (and so hasNull) right.
            v.reset();
            v.reserve(n);
            long nulls = table.readIntoAddress(fileColumns[i], from, to, v.valuesNativeAddress(), (long) n * widths[i],
                    nullBytes == null ? 0 : nullBytes.memoryAddress());
            if (nulls > 0) {
                markNulls(v, n);
            }
            KompaktScan.DIRECT_CHUNKS.incrementAndGet();
            columns[i] = v;
        }
        if (keyedColumns.length > 0) {
            // A stored read: the codes, and their dictionaries in the batch (a TableBatch).
            VectorSchemaRoot stored = table.read(allocator, keyedColumns, from, to);
            keys = stored;
            for (int k = 0; k < keyedSlots.length; k++) {
                FieldVector codes = stored.getVector(k);
                if (keyedValues[k] == null) {
                    // The column's dictionary is the file's: the same for every batch of it.
                    keyedValues[k] = KeyedValues.of((TableBatch) stored, codes);
                }
                columns[keyedSlots[k]] = keyed(offHeap[keyedSlots[k]], (BaseIntVector) codes, keyedValues[k], n);
            }
        }
        if (arrowColumns.length > 0) {
            current = table.readPortable(allocator, arrowColumns, from, to);
            for (int k = 0; k < arrowSlots.length; k++) {
                columns[arrowSlots[k]] = new ArrowColumnVector(current.getVector(k));
            }
        }
        return new ColumnarBatch(columns, n);
    }

    /** A dictionary column's codes as Spark's dictionary ids, nulls marked in runs. */
    private static OffHeapColumnVector keyed(OffHeapColumnVector v, BaseIntVector codes, KeyedValues values, int n) {
        v.reset();
        v.reserve(n);
        v.setDictionary(values);
        WritableColumnVector ids = v.reserveDictionaryIds(n);
        int i = 0;
        while (i < n) {
            if (!codes.isNull(i)) {
                ids.putInt(i, (int) codes.getValueAsLong(i));
                i++;
                continue;
            }
            int start = i;
            while (i < n && codes.isNull(i)) {
                i++;
            }
            v.putNulls(start, i - start);
        }
        return v;
    }

    /** Copies Rust's null bytes into the vector as runs of putNulls. */
    private void markNulls(OffHeapColumnVector v, int n) {
        int i = 0;
        while (i < n) {
            if (nullBytes.getByte(i) == 0) {
                i++;
                continue;
            }
            int start = i;
            while (i < n && nullBytes.getByte(i) != 0) {
                i++;
            }
            v.putNulls(start, i - start);
        }
    }

    @Override
    public ColumnarBatch get() {
        return batch;
    }

    @Override
    public CustomTaskMetric[] currentMetricsValues() {
        return new CustomTaskMetric[] {metric(KompaktScan.RowGroupsRead.NAME, groupsRead),
            metric(KompaktScan.RowsRead.NAME, rowsRead)};
    }

    private static CustomTaskMetric metric(String name, long value) {
        return new CustomTaskMetric() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public long value() {
                return value;
            }
        };
    }

    /** Frees the previous batch's Arrow vectors (the off-heap vectors are reused). */
    private void closeBatch() {
        batch = null;
        if (keys != null) {
            keys.close();
            keys = null;
        }
        if (current != null) {
            current.close();
            current = null;
        }
    }

    @Override
    public void close() {
        closeBatch();
        if (offHeap != null) {
            for (OffHeapColumnVector v : offHeap) {
                if (v != null) {
                    v.close();
                }
            }
            offHeap = null;
        }
        if (nullBytes != null) {
            nullBytes.close();
            nullBytes = null;
        }
        if (table != null) {
            table.close();
        }
        if (allocator != null) {
            KompaktScan.BYTES_LEFT_AT_CLOSE.addAndGet(allocator.getAllocatedMemory());
            BufferAllocator a = allocator;
            allocator = null;
            a.close();
        }
        KompaktScan.READERS_CLOSED.incrementAndGet();
    }
}
