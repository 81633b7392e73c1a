package dev.kompakt;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A row filter of {@link KompaktTable#plan} and {@link KompaktTable#readWhere}:
 * {@code column op values}. The op is one of {@code ==}, {@code !=}, {@code <}, {@code <=},
 * {@code >}, {@code >=} (one value), {@code in} and {@code not in} (any number of values).
 *
 * <pre>{@code
 * TableFilter.of("price", ">=", 10.0);
 * TableFilter.of("city", "in", "Oslo", "Bergen");
 * TableFilter.of("day", "<", LocalDate.of(2024, 1, 1));
 * }</pre>
 *
 * <p>The values are plain Java values, converted to the column's stored type (a dictionary
 * column's value type) by the table: {@code Byte}, {@code Short}, {@code Integer}, {@code Long},
 * {@code BigInteger} for integers (of any width, if they fit); {@code Float}, {@code Double};
 * {@code Boolean}; {@code String}; {@code byte[]}; {@code BigDecimal} for decimals (and
 * integers, if exact); {@code LocalDate} or {@code java.sql.Date} for dates; {@code LocalTime}
 * for times of day; {@code Instant}, {@code java.sql.Timestamp}, {@code OffsetDateTime} or
 * {@code ZonedDateTime} for timestamps with a time zone, {@code LocalDateTime} for timestamps
 * without; {@code java.time.Duration} for durations. A value that does not convert exactly (out
 * of range, finer than the column's time unit) makes {@link KompaktTable#accepts} false.
 *
 * <p>Nulls follow kompakt's core, not SQL: a null row passes no comparison (not even
 * {@code !=}); {@code in} passes the rows equal to a value, and the null rows if the list holds
 * a null; {@code not in} passes the rows {@code in} does not, so <em>null rows pass
 * {@code not in}</em> unless the list holds a null (SQL's {@code NOT IN} passes no null row:
 * add a filter {@code != } or {@code in} on the same column to keep that meaning).
 *
 * @param column the column's name
 * @param op the comparison
 * @param values the values, unmodifiable (nulls kept)
 */
public record TableFilter(String column, String op, List<Object> values) {
    /** The ops kompakt's core knows. */
    static final Set<String> OPS = Set.of("==", "!=", "<", "<=", ">", ">=", "in", "not in");

    /**
     * Checks and copies the values.
     *
     * @throws NullPointerException if an argument is null
     */
    public TableFilter {
        Objects.requireNonNull(column, "column");
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(values, "values");
        // A copy that keeps nulls (List.copyOf refuses them).
        values = Collections.unmodifiableList(new ArrayList<>(values));
    }

    /**
     * A filter from its parts.
     *
     * @param column the column's name
     * @param op {@code ==}, {@code !=}, {@code <}, {@code <=}, {@code >}, {@code >=}, {@code in}, {@code not in}
     * @param values one value for a comparison, any number for {@code in} and {@code not in}
     * @return the filter
     */
    public static TableFilter of(String column, String op, Object... values) {
        return new TableFilter(column, op, Arrays.asList(values));
    }

    /** Whether the op takes a list of values. */
    boolean takesList() {
        return "in".equals(op) || "not in".equals(op);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(column).append(' ').append(op).append(' ');
        if (takesList()) {
            sb.append('(');
        }
        for (int i = 0; i < values.size(); i++) {
            Object v = values.get(i);
            sb.append(i == 0 ? "" : ", ").append(v instanceof byte[] ? Arrays.toString((byte[]) v) : String.valueOf(v));
        }
        return takesList() ? sb.append(')').toString() : sb.toString();
    }
}
