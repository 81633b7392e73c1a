package dev.kompakt.spark;

import java.io.IOException;
import java.util.Iterator;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Makes the readers of a scan's partitions, on the executors: columnar, or rows over them. */
final class KompaktReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    private final StructType schema;
    private final int limit;
    private final int threads;

    KompaktReaderFactory(StructType schema, int limit, int threads) {
        this.schema = schema;
        this.limit = limit;
        this.threads = threads;
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
        return true;
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
        return new KompaktBatchReader((KompaktInputPartition) partition, schema, limit, threads);
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        KompaktBatchReader batches = new KompaktBatchReader((KompaktInputPartition) partition, schema, limit, threads);
        return new PartitionReader<InternalRow>() {
            private Iterator<InternalRow> rows;
            private InternalRow row;

            @Override
            public boolean next() throws IOException {
                while (rows == null || !rows.hasNext()) {
                    if (!batches.next()) {
                        return false;
                    }
                    rows = batches.get().rowIterator();
                }
                row = rows.next();
                return true;
            }

            @Override
            public InternalRow get() {
                return row;
            }

            @Override
            public CustomTaskMetric[] currentMetricsValues() {
                return batches.currentMetricsValues();
            }

            @Override
            public void close() throws IOException {
                batches.close();
            }
        };
    }
}
