package dev.kompakt.spark;

import dev.kompakt.TableFilter;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Builds a scan of table files: the columns a query needs (whole top-level columns: nested fields
 * are not pruned), the filters that may skip row groups, and a limit per reader.
 */
final class KompaktScanBuilder
        implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownFilters, SupportsPushDownLimit {
    private final KompaktFiles files;
    private final CaseInsensitiveStringMap options;
    private StructType required;
    private Filter[] pushed = new Filter[0];
    private final List<TableFilter> tableFilters = new ArrayList<>();
    private int limit = -1;

    KompaktScanBuilder(KompaktFiles files, CaseInsensitiveStringMap options) {
        this.files = files;
        this.options = options;
        this.required = files.schema;
    }

    @Override
    public void pruneColumns(StructType requiredSchema) {
        // The files' own top-level fields: a struct is read whole, whatever nested fields Spark
        // asked for (Spark allows partial pruning and binds to readSchema()).
        List<StructField> fields = new ArrayList<>();
        for (StructField f : requiredSchema.fields()) {
            fields.add(files.schema.apply(f.name()));
        }
        required = new StructType(fields.toArray(new StructField[0]));
    }

    /**
     * Converts the filters kompakt can plan with and returns every filter: they prune row groups
     * only, so Spark evaluates each one after the scan.
     */
    @Override
    public Filter[] pushFilters(Filter[] filters) {
        List<Filter> accepted = new ArrayList<>();
        tableFilters.clear();
        for (Filter f : filters) {
            List<TableFilter> converted = KompaktFilters.convert(f, files.schema);
            if (!converted.isEmpty()) {
                accepted.add(f);
                tableFilters.addAll(converted);
            }
        }
        pushed = accepted.toArray(new Filter[0]);
        return filters;
    }

    @Override
    public Filter[] pushedFilters() {
        return pushed.clone();
    }

    /** Each reader stops after {@code limit} rows; Spark still applies the limit (partial push). */
    @Override
    public boolean pushLimit(int limit) {
        this.limit = limit;
        return true;
    }

    @Override
    public Scan build() {
        return new KompaktScan(files, required, tableFilters, pushed, limit, options);
    }
}
