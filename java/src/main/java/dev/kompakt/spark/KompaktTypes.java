package dev.kompakt.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * Arrow types (as a table's portable schema gives them) to Spark SQL types and back: the types
 * both sides hold, and clear refusals, naming the column, for the others.
 */
final class KompaktTypes {
    /** What {@link #toSpark} accepts, for error messages. */
    static final String READABLE = "int8/16/32/64, float32/64, bool, decimal128, date32, timestamp(us), duration(us), "
            + "utf8, large_utf8, binary, large_binary, null, and lists, structs and maps of them";
    /** What {@link #checkWritable} accepts, for error messages. */
    static final String WRITABLE = "byte, short, int, long, float, double, boolean, decimal, date, timestamp, "
            + "timestamp_ntz, interval day to second, string, binary, void, and arrays, structs and maps of them";

    private KompaktTypes() {}

    /**
     * The Spark schema of a table's portable schema.
     *
     * @param schema the portable Arrow schema
     * @param file the file it comes from, for messages
     * @return the Spark schema
     * @throws IllegalArgumentException naming the column and the file for a type Spark cannot take
     */
    static StructType toSpark(Schema schema, String file) {
        List<StructField> fields = new ArrayList<>();
        for (Field f : schema.getFields()) {
            fields.add(new StructField(f.getName(), toSpark(f, f.getName(), file), f.isNullable(),
                    org.apache.spark.sql.types.Metadata.empty()));
        }
        return new StructType(fields.toArray(new StructField[0]));
    }

    private static DataType toSpark(Field field, String column, String file) {
        ArrowType t = field.getType();
        switch (t.getTypeID()) {
            case Int: {
                ArrowType.Int i = (ArrowType.Int) t;
                if (i.getIsSigned()) {
                    switch (i.getBitWidth()) {
                        case 8: return DataTypes.ByteType;
                        case 16: return DataTypes.ShortType;
                        case 32: return DataTypes.IntegerType;
                        case 64: return DataTypes.LongType;
                        default: break;
                    }
                }
                break;
            }
            case FloatingPoint: {
                FloatingPointPrecision p = ((ArrowType.FloatingPoint) t).getPrecision();
                if (p == FloatingPointPrecision.SINGLE) {
                    return DataTypes.FloatType;
                }
                if (p == FloatingPointPrecision.DOUBLE) {
                    return DataTypes.DoubleType;
                }
                break;
            }
            case Bool:
                return DataTypes.BooleanType;
            case Decimal: {
                ArrowType.Decimal d = (ArrowType.Decimal) t;
                if (d.getBitWidth() == 128 && d.getPrecision() <= DecimalType.MAX_PRECISION()
                        && d.getScale() >= 0 && d.getScale() <= d.getPrecision()) {
                    return DataTypes.createDecimalType(d.getPrecision(), d.getScale());
                }
                break;
            }
            case Date:
                if (((ArrowType.Date) t).getUnit() == DateUnit.DAY) {
                    return DataTypes.DateType;
                }
                break;
            case Timestamp: {
                ArrowType.Timestamp ts = (ArrowType.Timestamp) t;
                if (ts.getUnit() == TimeUnit.MICROSECOND) {
                    return ts.getTimezone() == null ? DataTypes.TimestampNTZType : DataTypes.TimestampType;
                }
                break;
            }
            case Duration:
                if (((ArrowType.Duration) t).getUnit() == TimeUnit.MICROSECOND) {
                    return DayTimeIntervalType.apply();
                }
                break;
            case Utf8:
            case LargeUtf8:
                return DataTypes.StringType;
            case Binary:
            case LargeBinary:
                return DataTypes.BinaryType;
            case Null:
                return DataTypes.NullType;
            case List: {
                Field item = field.getChildren().get(0);
                return DataTypes.createArrayType(toSpark(item, column, file), item.isNullable());
            }
            case Struct: {
                List<StructField> fields = new ArrayList<>();
                for (Field c : field.getChildren()) {
                    fields.add(new StructField(c.getName(), toSpark(c, column, file), c.isNullable(),
                            org.apache.spark.sql.types.Metadata.empty()));
                }
                return new StructType(fields.toArray(new StructField[0]));
            }
            case Map: {
                // Arrow's map: a list of entries, each a struct of a key (never null) and a value.
                Field entries = field.getChildren().get(0);
                Field key = entries.getChildren().get(0);
                Field value = entries.getChildren().get(1);
                return DataTypes.createMapType(toSpark(key, column, file), toSpark(value, column, file),
                        value.isNullable());
            }
            default:
                break;
        }
        throw new IllegalArgumentException("kompakt: column \"" + column + "\" of " + file + " has type " + t
                + ", which Spark cannot read; readable types: " + READABLE);
    }

    /**
     * Checks that every column of a schema about to be written has a type kompakt tables hold
     * and Spark reads back.
     *
     * @param schema the schema of the rows to write
     * @throws IllegalArgumentException naming the first column that does not
     */
    static void checkWritable(StructType schema) {
        for (StructField f : schema.fields()) {
            String bad = unwritable(f.dataType());
            if (bad != null) {
                throw new IllegalArgumentException("kompakt: cannot write column \"" + f.name() + "\" of type "
                        + f.dataType().simpleString() + ": kompakt tables cannot hold " + bad
                        + "; writable types: " + WRITABLE);
            }
        }
    }

    /** The name of the first unwritable type inside {@code t}, or null. */
    private static String unwritable(DataType t) {
        if (t instanceof ArrayType) {
            return unwritable(((ArrayType) t).elementType());
        }
        if (t instanceof MapType) {
            String bad = unwritable(((MapType) t).keyType());
            return bad != null ? bad : unwritable(((MapType) t).valueType());
        }
        if (t instanceof StructType) {
            for (StructField f : ((StructType) t).fields()) {
                String bad = unwritable(f.dataType());
                if (bad != null) {
                    return bad;
                }
            }
            return null;
        }
        boolean ok = t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType
                || t instanceof LongType || t instanceof FloatType || t instanceof DoubleType
                || t instanceof BooleanType || t instanceof DecimalType || t instanceof DateType
                || t instanceof TimestampType || t instanceof TimestampNTZType || t instanceof DayTimeIntervalType
                || t instanceof StringType || t instanceof BinaryType || t instanceof NullType;
        return ok ? null : t.typeName() + " values";
    }

    /**
     * Whether two schemas have the same columns (names and types, nullability aside: a catalog
     * string leaves it out).
     *
     * @param a one schema
     * @param b another
     * @return the first column in which they differ, or null if they do not
     */
    static String firstDifference(StructType a, StructType b) {
        StructField[] x = a.fields();
        StructField[] y = b.fields();
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            if (i >= x.length) {
                return y[i].name();
            }
            if (i >= y.length || !x[i].name().equals(y[i].name())
                    || !x[i].dataType().catalogString().equals(y[i].dataType().catalogString())) {
                return x[i].name();
            }
        }
        return null;
    }

    /**
     * A human description of a column's type in a schema, for messages.
     *
     * @param schema the schema
     * @param column the column
     * @return its type, or "absent"
     */
    static String describe(StructType schema, String column) {
        for (StructField f : schema.fields()) {
            if (f.name().equals(column)) {
                return f.dataType().simpleString();
            }
        }
        return "absent";
    }
}
