package dev.kompakt.spark;

import dev.kompakt.TableFilter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Spark's V1 filters as kompakt {@link TableFilter}s, where the two agree on every row: they only
 * prune row groups (Spark evaluates every filter again), so a filter that could drop a row Spark
 * keeps is never converted.
 */
final class KompaktFilters {
    private KompaktFilters() {}

    /**
     * The table filters that together keep every row {@code filter} keeps.
     *
     * @param filter a Spark filter
     * @param schema the table's schema
     * @return the filters, empty if none applies
     */
    static List<TableFilter> convert(Filter filter, StructType schema) {
        if (filter instanceof And) {
            List<TableFilter> out = new ArrayList<>(convert(((And) filter).left(), schema));
            out.addAll(convert(((And) filter).right(), schema));
            return out;
        }
        if (filter instanceof EqualTo) {
            EqualTo f = (EqualTo) filter;
            return one(schema, f.attribute(), "==", f.value());
        }
        if (filter instanceof GreaterThan) {
            GreaterThan f = (GreaterThan) filter;
            return one(schema, f.attribute(), ">", f.value());
        }
        if (filter instanceof GreaterThanOrEqual) {
            GreaterThanOrEqual f = (GreaterThanOrEqual) filter;
            return one(schema, f.attribute(), ">=", f.value());
        }
        if (filter instanceof LessThan) {
            LessThan f = (LessThan) filter;
            return one(schema, f.attribute(), "<", f.value());
        }
        if (filter instanceof LessThanOrEqual) {
            LessThanOrEqual f = (LessThanOrEqual) filter;
            return one(schema, f.attribute(), "<=", f.value());
        }
        if (filter instanceof Not && ((Not) filter).child() instanceof EqualTo) {
            EqualTo f = (EqualTo) ((Not) filter).child();
            return one(schema, f.attribute(), "!=", f.value());
        }
        if (filter instanceof In) {
            In f = (In) filter;
            DataType type = typeOf(schema, f.attribute());
            List<Object> values = new ArrayList<>();
            for (Object v : f.values()) {
                // a IN (1, NULL) keeps the rows equal to 1: a NULL keeps none.
                if (v != null) {
                    if (!pushable(type, "in", v)) {
                        return Collections.emptyList();
                    }
                    values.add(value(v));
                }
            }
            return values.isEmpty() ? Collections.emptyList()
                    : Collections.singletonList(new TableFilter(f.attribute(), "in", values));
        }
        return Collections.emptyList();
    }

    private static List<TableFilter> one(StructType schema, String column, String op, Object v) {
        if (v == null || !pushable(typeOf(schema, column), op, v)) {
            return Collections.emptyList();
        }
        return Collections.singletonList(TableFilter.of(column, op, value(v)));
    }

    /** The type of a top-level column, or null (nested fields and unknown names are not pushed). */
    private static DataType typeOf(StructType schema, String column) {
        for (StructField f : schema.fields()) {
            if (f.name().equals(column)) {
                return f.dataType();
            }
        }
        return null;
    }

    private static boolean pushable(DataType type, String op, Object v) {
        if (type == null) {
            return false;
        }
        if (type instanceof ByteType || type instanceof ShortType || type instanceof IntegerType
                || type instanceof LongType || type instanceof DecimalType || type instanceof DateType
                || type instanceof TimestampType || type instanceof TimestampNTZType || type instanceof StringType) {
            return true;
        }
        if (type instanceof BooleanType || type instanceof BinaryType) {
            // Equality only: no ordering question between the two sides.
            return op.equals("==") || op.equals("in");
        }
        if (type instanceof FloatType || type instanceof DoubleType) {
            // Spark orders NaN above every number and makes -0.0 equal 0.0; statistics may not:
            // only tests that no NaN passes, against values other than NaN and zero.
            double d = ((Number) v).doubleValue();
            boolean plain = !Double.isNaN(d) && d != 0.0;
            return plain && (op.equals("==") || op.equals("in") || op.equals("<") || op.equals("<="));
        }
        return false;
    }

    /** A filter value as TableFilter takes it (java.time for dates and instants). */
    private static Object value(Object v) {
        if (v instanceof java.sql.Date) {
            return ((java.sql.Date) v).toLocalDate();
        }
        if (v instanceof java.sql.Timestamp) {
            return ((java.sql.Timestamp) v).toInstant();
        }
        return v;
    }
}
