package dev.kompakt.spark;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.errors.QueryCompilationErrors;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.jdk.javaapi.CollectionConverters;

/**
 * kompakt table files as a Spark data source, {@code format("kompakt")}.
 *
 * <pre>{@code
 * Dataset<Row> df = spark.read().format("kompakt").load("s3://bucket/events/");  // a file, folder or glob
 * df.write().format("kompakt").mode("overwrite").option("sortedBy", "time").save("/data/events");
 * spark.sql("CREATE TABLE events USING kompakt LOCATION '/data/events'");
 * }</pre>
 *
 * <p>Reads (DataSource V2): one input partition per file or per range of whole row groups (about
 * {@code spark.sql.files.maxPartitionBytes} stored bytes each), columnar, with column pruning,
 * filters that skip row groups (Spark still applies every filter) and limits. All files must have
 * the same schema.
 *
 * <p>Writes go to a local folder, one file per task, made visible only when the job commits.
 * Spark 4.2's {@code DataFrameWriter.save} refuses the modes error and ignore for a DataSource V2
 * table that can be written, so this class takes {@code save} as a V1 {@link
 * CreatableRelationProvider} (its tables do not declare batch writes): it applies the mode
 * itself and then runs a DataSource V2 append or overwrite through {@link KompaktWritableSource}.
 * Write options: {@code codec}, {@code level}, {@code stringCodec}, {@code rowsPerGroup},
 * {@code threads}, {@code sortedBy} (comma-separated columns; each task sorts its rows by them).
 */
public class KompaktDataSource implements TableProvider, DataSourceRegister, CreatableRelationProvider {
    /** The short name: {@code format("kompakt")}. */
    public static final String SHORT_NAME = "kompakt";

    /** The listing inferSchema made, reused by getTable (Spark calls both on one instance). */
    private KompaktFiles lastListing;

    /** A provider (Spark makes one per use). */
    public KompaktDataSource() {}

    @Override
    public String shortName() {
        return SHORT_NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        lastListing = KompaktFiles.list(KompaktFiles.locations(options));
        return lastListing.schema;
    }

    /** The schema comes from the files; one given by the user or the catalog must match them. */
    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new KompaktSparkTable(schema, properties, reusableListing(properties), false);
    }

    KompaktFiles reusableListing(Map<String, String> properties) {
        KompaktFiles listing = lastListing;
        if (listing == null) {
            return null;
        }
        try {
            return listing.locations.equals(KompaktFiles.locations(properties)) ? listing : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * {@code df.write().format("kompakt").mode(mode).save(folder)}: error (the default) fails if
     * the folder holds table files, ignore then writes nothing, append adds files, overwrite
     * replaces the table files once the new ones are committed.
     *
     * @param sqlContext the session
     * @param mode the save mode
     * @param parameters the write options, with {@code path}
     * @param data the rows
     * @return a relation of the folder
     */
    @Override
    public BaseRelation createRelation(SQLContext sqlContext, SaveMode mode, scala.collection.immutable.Map<String, String> parameters,
            Dataset<Row> data) {
        Map<String, String> options = new HashMap<>(CollectionConverters.asJava(parameters));
        KompaktWritableSource.checkWrite(data.schema(), options);
        Path folder = KompaktWritableSource.folder(options);
        boolean exists;
        try {
            exists = !KompaktWrite.tableFiles(folder).isEmpty();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        boolean write = true;
        SaveMode v2Mode = SaveMode.Append;
        switch (mode) {
            case ErrorIfExists:
                if (exists) {
                    throw KompaktFiles.<RuntimeException>sneaky(QueryCompilationErrors.outputPathAlreadyExistsError(
                            new org.apache.hadoop.fs.Path(folder.toUri())));
                }
                break;
            case Ignore:
                write = !exists;
                break;
            case Overwrite:
                v2Mode = SaveMode.Overwrite;
                break;
            default:
                break;
        }
        if (write) {
            Map<String, String> v2Options = new HashMap<>(options);
            v2Options.keySet().removeIf(k -> k.equalsIgnoreCase("path"));
            v2Options.put("path", folder.toString());
            data.write().format(KompaktWritableSource.class.getName()).mode(v2Mode).options(v2Options).save();
        }
        StructType schema = data.schema();
        return new BaseRelation() {
            @Override
            public SQLContext sqlContext() {
                return sqlContext;
            }

            @Override
            public StructType schema() {
                return schema;
            }
        };
    }

    /**
     * Whether a write of this type may start (the writer checks each column again with a
     * message naming it).
     */
    @Override
    public boolean supportsDataType(org.apache.spark.sql.types.DataType dt) {
        return true;
    }
}
