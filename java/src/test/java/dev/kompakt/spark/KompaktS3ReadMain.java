package dev.kompakt.spark;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Run in a child JVM by {@link KompaktSourceReadTest#readsFromS3()}, whose environment holds the
 * AWS settings of a test S3 server: reads a table there and prints "RESULT rows sum filtered max".
 */
public final class KompaktS3ReadMain {
    private KompaktS3ReadMain() {}

    /**
     * Reads {@code args[0]} with a local session.
     *
     * @param args the location, and a scratch folder
     * @throws Exception on failure (the exit status is then not 0)
     */
    public static void main(String[] args) throws Exception {
        SparkSession spark = KompaktSourceReadTest.session(Files.createDirectories(Path.of(args[1])), "kompakt-s3");
        try {
            Row all = spark.read().format("kompakt").load(args[0]).selectExpr("count(*)", "sum(id)").first();
            Row some = spark.read().format("kompakt").load(args[0]).where("id >= 40000 AND id < 40100")
                    .selectExpr("count(*)", "max(s)").first();
            System.out.println("RESULT " + all.getLong(0) + " " + all.getLong(1) + " " + some.getLong(0) + " "
                    + some.getString(1));
        } finally {
            spark.stop();
        }
    }
}
