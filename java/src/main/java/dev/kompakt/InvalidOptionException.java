package dev.kompakt;

/**
 * An invalid option or argument (kind {@link ErrorKind#OPTION}): a codec, level, block size,
 * thread count, filter or element size out of range, or a range outside an array. Unchecked,
 * like {@link IllegalArgumentException}, since it is a programming or configuration error. The
 * message quotes the value and names the valid ones, in the same words as kompakt's command
 * line, Python and R packages: {@code invalid codec "nope": one of: none, auto, lz4[:ACCEL 1-65537], ...}.
 */
public class InvalidOptionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * An exception with a message (kompakt's native code throws it with this constructor).
     *
     * @param message the invalid value and the valid ones
     */
    public InvalidOptionException(String message) {
        super(message);
    }

    /**
     * An exception with a message and its cause.
     *
     * @param message the invalid value and the valid ones
     * @param cause the exception that caused it
     */
    public InvalidOptionException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * What went wrong: always {@link ErrorKind#OPTION}.
     *
     * @return {@link ErrorKind#OPTION}
     */
    public ErrorKind kind() {
        return ErrorKind.OPTION;
    }
}
