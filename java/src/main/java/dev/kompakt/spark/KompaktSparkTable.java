package dev.kompakt.spark;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The table files at a location, as a Spark table: read in batches; written (append, or
 * overwrite by truncation) only when it comes from {@link KompaktWritableSource}.
 */
final class KompaktSparkTable implements SupportsRead, SupportsWrite {
    private final StructType schema;
    private final Map<String, String> properties;
    private final KompaktFiles listing;
    private final boolean writable;

    KompaktSparkTable(StructType schema, Map<String, String> properties, KompaktFiles listing, boolean writable) {
        this.schema = schema;
        this.properties = new HashMap<>(properties);
        this.listing = listing;
        this.writable = writable;
    }

    @Override
    public String name() {
        String path = KompaktWritableSource.option(properties, "path");
        return "kompakt " + (path != null ? path : KompaktWritableSource.option(properties, "paths"));
    }

    /** Deprecated in Spark 4 for columns(), whose default derives the columns from it. */
    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
        return schema;
    }

    @Override
    public Map<String, String> properties() {
        return properties;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return writable
                ? EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE)
                : EnumSet.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        Map<String, String> all = new HashMap<>(properties);
        all.putAll(options.asCaseSensitiveMap());
        KompaktFiles files = listing != null ? listing : KompaktFiles.list(KompaktFiles.locations(all));
        String column = KompaktTypes.firstDifference(schema, files.schema);
        if (column != null) {
            throw new IllegalArgumentException("kompakt: the schema given for " + files.locations
                    + " differs from its files' at column \"" + column + "\": "
                    + KompaktTypes.describe(schema, column) + " given, "
                    + KompaktTypes.describe(files.schema, column) + " in the files");
        }
        return new KompaktScanBuilder(files, new CaseInsensitiveStringMap(all));
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        if (!writable) {
            throw new UnsupportedOperationException("kompakt: write with df.write().format(\"kompakt\").save(folder)");
        }
        return new KompaktWrite.Builder(info, properties);
    }
}
