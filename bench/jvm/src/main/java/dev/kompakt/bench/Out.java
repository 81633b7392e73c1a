package dev.kompakt.bench;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/** Results as JSON lines on standard output, prefixed with "@@ " for bench/jvm/report.py. */
final class Out {
  private Out() {}

  /** An ordered record: {@code rec("kind", "mapstatus", "codec", label, ...)}. */
  static Map<String, Object> rec(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  static synchronized void emit(Map<String, Object> m) {
    StringBuilder sb = new StringBuilder("@@ {");
    boolean first = true;
    for (Map.Entry<String, Object> e : m.entrySet()) {
      if (!first) {
        sb.append(", ");
      }
      first = false;
      quote(sb, e.getKey());
      sb.append(": ");
      value(sb, e.getValue());
    }
    sb.append('}');
    System.out.println(sb);
    System.out.flush();
  }

  private static void value(StringBuilder sb, Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Double d) {
      sb.append(d.isNaN() || d.isInfinite() ? "null" : String.format(java.util.Locale.ROOT, "%.6g", d));
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else if (v instanceof Map<?, ?> map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          sb.append(", ");
        }
        first = false;
        quote(sb, String.valueOf(e.getKey()));
        sb.append(": ");
        value(sb, e.getValue());
      }
      sb.append('}');
    } else if (v instanceof double[] arr) {
      sb.append('[');
      for (int i = 0; i < arr.length; i++) {
        if (i > 0) {
          sb.append(", ");
        }
        value(sb, arr[i]);
      }
      sb.append(']');
    } else if (v instanceof Object[] arr) {
      sb.append('[');
      for (int i = 0; i < arr.length; i++) {
        if (i > 0) {
          sb.append(", ");
        }
        value(sb, arr[i]);
      }
      sb.append(']');
    } else {
      quote(sb, String.valueOf(v));
    }
  }

  private static void quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }

  /** CPU time of the whole process (all threads, native ones too), nanoseconds. */
  static long processCpuNanos() {
    var os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
      return sun.getProcessCpuTime();
    }
    return -1;
  }

  static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    int n = s.length;
    return n == 0 ? Double.NaN : (n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2);
  }

  static double min(double[] xs) {
    double m = Double.POSITIVE_INFINITY;
    for (double x : xs) {
      m = Math.min(m, x);
    }
    return m;
  }

  /** Parses "--name value" pairs; a flag without a value is "true". */
  static Map<String, String> args(String[] argv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (!a.startsWith("--")) {
        throw new IllegalArgumentException("expected --name value, got " + a);
      }
      String key = a.substring(2);
      if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) {
        m.put(key, argv[++i]);
      } else {
        m.put(key, "true");
      }
    }
    return m;
  }
}
