package dev.kompakt.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kompakt.InvalidOptionException;
import dev.kompakt.KompaktTable;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.SparkException;
import org.apache.spark.sql.types.StructType;

/** The table files a read names, with their common Spark schema (driver side). */
final class KompaktFiles implements Serializable {
    private static final long serialVersionUID = 1L;

    /** What the planner needs of one file. */
    record FileInfo(String path, long numRows, int rowsPerGroup, long numRowGroups, long fileSize)
            implements Serializable {}

    final List<String> locations;
    final List<FileInfo> files;
    final StructType schema;

    private KompaktFiles(List<String> locations, List<FileInfo> files, StructType schema) {
        this.locations = locations;
        this.files = files;
        this.schema = schema;
    }

    /**
     * The locations in a read's options: {@code path} (load(path)) and {@code paths} (load(a, b),
     * a JSON array, as Spark's DataFrameReader writes it).
     *
     * @param options the options, keys in lower case or as given
     * @return the locations, in order, without repeats
     * @throws IllegalArgumentException if there is none
     */
    static List<String> locations(Map<String, String> options) {
        Set<String> out = new LinkedHashSet<>();
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (e.getKey().equalsIgnoreCase("path") && e.getValue() != null) {
                out.add(local(e.getValue()));
            }
        }
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (e.getKey().equalsIgnoreCase("paths") && e.getValue() != null) {
                try {
                    for (String p : new ObjectMapper().readValue(e.getValue(), String[].class)) {
                        out.add(local(p));
                    }
                } catch (IOException x) {
                    throw new IllegalArgumentException("kompakt: option paths is not a JSON array of strings: "
                            + e.getValue(), x);
                }
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(
                    "kompakt: no path: load(path) with a table file, a folder or a glob, local or s3://");
        }
        return new ArrayList<>(out);
    }

    /**
     * A {@code file:} URI (as Spark's catalog stores a table's location) as the local path that
     * kompakt's listing takes; anything else as it is.
     */
    static String local(String location) {
        if (!location.regionMatches(true, 0, "file:", 0, 5)) {
            return location;
        }
        try {
            return java.nio.file.Paths.get(new java.net.URI(location)).toString();
        } catch (java.net.URISyntaxException | IllegalArgumentException e) {
            // A glob or an unescaped name: drop the scheme and the empty authority.
            String rest = location.substring(5);
            return rest.startsWith("//") ? rest.substring(2) : rest;
        }
    }

    /**
     * Lists the table files of the locations (in Rust: folders, globs, files, s3:// too) and reads
     * their schemas, which must all be the same.
     *
     * @param locations what load() was given
     * @return the files and their schema
     * @throws IllegalArgumentException naming two files and a column if their schemas differ, or
     *     a column and a file if Spark cannot take its type
     */
    static KompaktFiles list(List<String> locations) {
        List<FileInfo> files = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        StructType schema = null;
        String first = null;
        for (String location : locations) {
            List<String> paths;
            try {
                paths = KompaktTable.list(location);
            } catch (IOException e) {
                throw readFailure("cannot list " + location, e);
            }
            for (String path : paths) {
                if (!seen.add(path)) {
                    continue; // named twice (a folder and a glob in it): read once
                }
                StructType s;
                try (KompaktTable t = KompaktTable.open(path, 1)) {
                    s = KompaktTypes.toSpark(portableSchema(t), path);
                    files.add(new FileInfo(path, t.numRows(), t.rowsPerGroup(), t.numRowGroups(), t.fileSize()));
                } catch (IOException e) {
                    throw readFailure("cannot read the table file " + path, e);
                }
                if (schema == null) {
                    schema = s;
                    first = path;
                } else {
                    String column = KompaktTypes.firstDifference(schema, s);
                    if (column != null) {
                        throw new IllegalArgumentException("kompakt: the table files " + first + " and " + path
                                + " have different schemas: column \"" + column + "\" is "
                                + KompaktTypes.describe(schema, column) + " in the first and "
                                + KompaktTypes.describe(s, column) + " in the second");
                    }
                }
            }
        }
        return new KompaktFiles(locations, files, schema);
    }

    /** The portable schema, or the refusal of a column with the file named. */
    static org.apache.arrow.vector.types.pojo.Schema portableSchema(KompaktTable t) {
        try {
            return t.portableSchema();
        } catch (InvalidOptionException e) {
            throw new InvalidOptionException("kompakt: " + t.path() + ": " + e.getMessage(), e);
        }
    }

    /**
     * A failure to read table files on the driver, as a {@link SparkException} (as Spark's own
     * sources report unreadable footers) whose cause is kompakt's exception.
     */
    static RuntimeException readFailure(String what, Throwable cause) {
        throw KompaktFiles.<RuntimeException>sneaky(new SparkException("kompakt: " + what + ": " + cause.getMessage(), cause));
    }

    /**
     * Throws a checked exception from a method that cannot declare it: Spark's Scala callers
     * declare nothing either, and users catch SparkException from reads.
     */
    @SuppressWarnings("unchecked")
    static <E extends Throwable> E sneaky(Throwable e) throws E {
        throw (E) e;
    }
}
