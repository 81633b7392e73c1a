package dev.kompakt.spark;

import java.net.URI;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The DataSource V2 write path of {@link KompaktDataSource}: its tables declare batch writes and
 * truncation, so {@code DataFrameWriter.save} with mode append or overwrite runs a V2 write
 * (commit protocol included) through them. Users name {@code format("kompakt")}, whose save
 * handles the four modes and comes here; this class is public only because Spark loads it by
 * name.
 */
public class KompaktWritableSource implements TableProvider {
    /** A provider (Spark makes one per use). */
    public KompaktWritableSource() {}

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return KompaktFiles.list(KompaktFiles.locations(options)).schema;
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new KompaktSparkTable(schema, properties, null, true);
    }

    /**
     * The local folder a write goes to.
     *
     * @param options the write options, with {@code path}
     * @return the folder, absolute
     * @throws IllegalArgumentException if there is no path or it is not local
     */
    static Path folder(Map<String, String> options) {
        String path = option(options, "path");
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException("kompakt: no path: save(folder) with a local folder");
        }
        int colon = path.indexOf(':');
        String scheme = colon > 1 && path.indexOf('/') > colon ? path.substring(0, colon).toLowerCase(Locale.ROOT) : null;
        if (scheme == null) {
            return Paths.get(path).toAbsolutePath().normalize();
        }
        if (scheme.equals("file")) {
            return Paths.get(URI.create(path)).toAbsolutePath().normalize();
        }
        throw new IllegalArgumentException("kompakt: cannot write to " + path
                + ": writes go to local folders only (a path or a file:// URI); " + scheme
                + ":// locations can be read, not written");
    }

    /**
     * Checks a write before any task starts: the folder, the column types and the options.
     *
     * @param schema the rows' schema
     * @param options the write options
     * @throws IllegalArgumentException (an InvalidOptionException for a bad option) with the reason
     */
    static void checkWrite(StructType schema, Map<String, String> options) {
        folder(options);
        KompaktTypes.checkWritable(schema);
        KompaktWrite.Settings.of(options).check(schema);
    }

    /** An option by name, in any case (V1 and V2 options keep the user's spelling). */
    static String option(Map<String, String> options, String key) {
        String exact = options.get(key);
        if (exact != null) {
            return exact;
        }
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (e.getKey().equalsIgnoreCase(key)) {
                return e.getValue();
            }
        }
        return null;
    }
}
