package dev.kompakt.spark;

import dev.kompakt.KompaktTable;
import dev.kompakt.RowRange;
import dev.kompakt.TableFilter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A scan of table files: input partitions of whole row groups (only those the pushed filters
 * may need), read in columnar batches.
 */
final class KompaktScan implements Scan, Batch {
    /** Row groups read by every reader of this class loader (a test and diagnostics hook). */
    static final AtomicLong ROW_GROUPS_READ = new AtomicLong();
    /** Arrow bytes still allocated when readers closed (0 unless a buffer leaked). */
    static final AtomicLong BYTES_LEFT_AT_CLOSE = new AtomicLong();
    /** Column chunks decoded straight into Spark's off-heap vectors (the rest went through Arrow). */
    static final AtomicLong DIRECT_CHUNKS = new AtomicLong();
    /** Readers closed. */
    static final AtomicLong READERS_CLOSED = new AtomicLong();

    private final KompaktFiles files;
    private final StructType schema;
    private final List<TableFilter> filters;
    private final Filter[] pushed;
    private final int limit;
    private final CaseInsensitiveStringMap options;
    private InputPartition[] partitions;
    private long plannedGroups;
    private long totalGroups;

    KompaktScan(KompaktFiles files, StructType schema, List<TableFilter> filters, Filter[] pushed, int limit,
            CaseInsensitiveStringMap options) {
        this.files = files;
        this.schema = schema;
        this.filters = new ArrayList<>(filters);
        this.pushed = pushed;
        this.limit = limit;
        this.options = options;
    }

    @Override
    public StructType readSchema() {
        return schema;
    }

    @Override
    public String description() {
        planInputPartitions();
        return "KompaktScan [" + files.files.size() + " files, " + partitions.length + " partitions, "
                + plannedGroups + " of " + totalGroups + " row groups" + ", pushed filters: "
                + Arrays.toString(pushed) + (limit >= 0 ? ", limit " + limit : "") + "]";
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    /**
     * Per file, the row ranges the filters may need (all rows without filters), cut at row-group
     * boundaries into partitions of about {@code spark.sql.files.maxPartitionBytes} (or the read
     * option {@code maxPartitionBytes}) stored bytes.
     */
    @Override
    public synchronized InputPartition[] planInputPartitions() {
        if (partitions != null) {
            return partitions;
        }
        String maxOption = options.get("maxPartitionBytes");
        long maxBytes = maxOption != null ? JavaUtils.byteStringAsBytes(maxOption)
                : SQLConf.get().filesMaxPartitionBytes();
        List<InputPartition> out = new ArrayList<>();
        long planned = 0;
        long total = 0;
        for (KompaktFiles.FileInfo f : files.files) {
            total += f.numRowGroups();
            if (f.numRows() == 0) {
                continue;
            }
            List<RowRange> ranges = ranges(f);
            long rpg = Math.max(1, f.rowsPerGroup());
            long bytesPerGroup = Math.max(1, f.fileSize() / Math.max(1, f.numRowGroups()));
            long groupsPerPartition = Math.max(1, maxBytes / bytesPerGroup);
            // Partition p holds the row groups [p * groupsPerPartition, (p + 1) * groupsPerPartition).
            Map<Long, List<long[]>> byWindow = new LinkedHashMap<>();
            long lastGroup = -1;
            for (RowRange r : ranges) {
                long from = r.from();
                while (from < r.to()) {
                    long group = from / rpg;
                    long window = group / groupsPerPartition;
                    long to = Math.min(r.to(), (window + 1) * groupsPerPartition * rpg);
                    byWindow.computeIfAbsent(window, w -> new ArrayList<>()).add(new long[] {from, to});
                    long endGroup = (to - 1) / rpg;
                    planned += endGroup - Math.max(group, lastGroup + 1) + 1;
                    lastGroup = endGroup;
                    from = to;
                }
            }
            for (List<long[]> rs : byWindow.values()) {
                long[] flat = new long[2 * rs.size()];
                for (int i = 0; i < rs.size(); i++) {
                    flat[2 * i] = rs.get(i)[0];
                    flat[2 * i + 1] = rs.get(i)[1];
                }
                out.add(new KompaktInputPartition(f.path(), flat, f.rowsPerGroup()));
            }
        }
        partitions = out.toArray(new InputPartition[0]);
        plannedGroups = planned;
        totalGroups = total;
        return partitions;
    }

    /** The ranges of a file that may hold rows passing the filters it accepts. */
    private List<RowRange> ranges(KompaktFiles.FileInfo f) {
        List<RowRange> all = Collections.singletonList(new RowRange(0, f.numRows()));
        if (filters.isEmpty()) {
            return all;
        }
        try (KompaktTable t = KompaktTable.open(f.path(), 1)) {
            List<TableFilter> usable = new ArrayList<>();
            for (TableFilter tf : filters) {
                if (t.accepts(tf)) {
                    usable.add(tf);
                }
            }
            return usable.isEmpty() ? all : t.plan(0, f.numRows(), usable);
        } catch (IOException e) {
            throw KompaktFiles.readFailure("cannot plan the read of " + f.path(), e);
        }
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        String threads = options.get("threads");
        return new KompaktReaderFactory(schema, limit, threads == null ? 1 : Integer.parseInt(threads.trim()));
    }

    @Override
    public CustomMetric[] supportedCustomMetrics() {
        return new CustomMetric[] {new RowGroupsRead(), new RowsRead()};
    }

    /** The row groups the readers read (with filters, those the plan kept). */
    public static final class RowGroupsRead extends CustomSumMetric {
        /** Metric name. */
        public static final String NAME = "kompaktRowGroupsRead";

        /** The metric (Spark makes it by name). */
        public RowGroupsRead() {}

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "kompakt row groups read";
        }
    }

    /** The rows the readers decoded. */
    public static final class RowsRead extends CustomSumMetric {
        /** Metric name. */
        public static final String NAME = "kompaktRowsRead";

        /** The metric (Spark makes it by name). */
        public RowsRead() {}

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "kompakt rows read";
        }
    }
}
