// Corpus of bytecode shapes a class-file rewriter can get wrong (switch padding, exception
// tables, monitors, constructors before super(), goto_w, wide locals, stack map frames...).
// Every case is deterministic: main prints one line "name = value" per case, then "corpus done",
// and the output is the same on every run, with or without an instrumenting agent.

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;
import java.util.stream.Collectors;

public class RewriterCorpus {
    static void print(String name, Object value) {
        System.out.println(name + " = " + value);
    }

    // ---- switches ----

    // Six switches in one loop, each preceded by a different amount of code, so their
    // tableswitch/lookupswitch padding (0-3 bytes) differs; a rewriter that moves code must
    // re-pad every one of them.
    static int switchLoop(int n) {
        int acc = 0;
        for (int i = 0; i < n; i++) {
            switch (i % 7) {
                case 0: acc += 1; break;
                case 1: acc += 3; break;
                case 2:
                case 3: acc ^= i; break;
                case 5: acc -= 2; break;
                default: acc++;
            }
            acc += i;
            switch (i * 1000) {
                case -5: acc += 100; break;
                case 1: acc += 200; break;
                case 1000: acc += 300; break;
                case 100000: acc += 400; break;
                default: acc ^= 1;
            }
            acc = acc * 3 + 1;
            switch ((i + acc) & 3) {
                case 0: acc += 7; break;
                case 1: acc -= 7; break;
                case 2: acc *= 5; break;
                case 3: acc >>= 1; break;
            }
            long wide = acc;
            switch (i - 5) {
                case -5: acc += 11; break;
                case 1000: acc += 13; break;
                case 100000: acc += 17; break;
                case 1: acc += 19; break;
            }
            acc += (int) (wide >>> 3);
            acc -= i;
            switch (i % 4) {
                case 0: acc |= 8; break;
                case 1: acc &= ~8; break;
                case 2: acc += 2; break;
                default: acc -= 2;
            }
            switch (i) {
                case 1: acc += 1; break;
                case 1000: acc += 2; break;
                case 100000: acc += 3; break;
                case -5: acc += 4; break;
                default: break;
            }
        }
        return acc;
    }

    // "Aa" and "BB" have the same hashCode, so the String switch needs equals() after the hash.
    static int stringSwitch(String s) {
        switch (s) {
            case "Aa": return 1;
            case "BB": return 2;
            case "alpha": return 3;
            case "beta": return 4;
            default: return -1;
        }
    }

    enum Color { RED, GREEN, BLUE, ALPHA }

    // Compiles to a synthetic switch-map class (RewriterCorpus$1).
    static int enumSwitch(Color c) {
        switch (c) {
            case RED: return 10;
            case GREEN: return 20;
            case BLUE: return 30;
            default: return 0;
        }
    }

    // ---- exceptions ----

    static String nestedTry(int mode) {
        StringBuilder sb = new StringBuilder();
        try {
            sb.append('a');
            try {
                sb.append('b');
                try {
                    sb.append('c');
                    if (mode == 1) {
                        throw new IllegalArgumentException();
                    }
                    if (mode == 2) {
                        throw new IllegalStateException();
                    }
                    if (mode == 3) {
                        throw new UnsupportedOperationException();
                    }
                } catch (IllegalArgumentException e) {
                    sb.append("[1]");
                } finally {
                    sb.append('C');
                }
            } catch (IllegalStateException e) {
                sb.append("[2]");
            } finally {
                sb.append('B');
            }
        } catch (RuntimeException e) {
            sb.append("[3]");
        } finally {
            sb.append('A');
        }
        return sb.toString();
    }

    @SuppressWarnings("finally")
    static int finallyOverridesReturn() {
        try {
            return 1;
        } finally {
            return 2;
        }
    }

    @SuppressWarnings("finally")
    static int finallyOverridesThrow() {
        try {
            throw new IllegalStateException("lost");
        } finally {
            return 3;
        }
    }

    static final class Resource implements AutoCloseable {
        static int closes;
        final int id;
        final boolean failOnClose;

        Resource(int id, boolean failOnClose) {
            this.id = id;
            this.failOnClose = failOnClose;
        }

        @Override
        public void close() {
            closes++;
            if (failOnClose) {
                throw new IllegalStateException("close " + id);
            }
        }
    }

    // Returns closes and suppressed exceptions seen over three runs (normal, body throws,
    // body and close both throw).
    static String tryWithResources() {
        Resource.closes = 0;
        int suppressed = 0;
        int sum = 0;
        for (int mode = 0; mode < 3; mode++) {
            try (Resource a = new Resource(1, false); Resource b = new Resource(2, mode == 2)) {
                sum += a.id + b.id;
                if (mode > 0) {
                    throw new IllegalArgumentException("body");
                }
            } catch (IllegalArgumentException e) {
                suppressed += e.getSuppressed().length;
            }
        }
        return "closes=" + Resource.closes + " suppressed=" + suppressed + " sum=" + sum;
    }

    static int level3(int n) throws IOException {
        if (n % 2 == 1) {
            throw new IOException("odd " + n);
        }
        return n;
    }

    // Precise rethrow of the checked exception, unchanged.
    static int level2(int n) throws IOException {
        try {
            return level3(n) * 10;
        } catch (Exception e) {
            throw e;
        }
    }

    static int level1(int n) {
        try {
            return level2(n);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String rethrowAcrossMethods() {
        StringBuilder sb = new StringBuilder();
        for (int n = 0; n < 4; n++) {
            try {
                sb.append(level1(n)).append(';');
            } catch (UncheckedIOException e) {
                sb.append(e.getCause().getMessage()).append(';');
            }
        }
        return sb.toString();
    }

    static int checkedLoop() {
        int sum = 0;
        for (int i = 0; i < 20; i++) {
            try {
                sum += level3(i % 3 == 0 ? 1 : 2) + i;
            } catch (IOException e) {
                if (i > 14) {
                    break;
                }
                continue;
            }
            sum = sum * 3 + 1;
        }
        return sum;
    }

    // The exception handler's range starts at the method's first instruction.
    static int tryFromStart(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    // The method's last instruction is athrow; no return at all.
    static int alwaysThrows(int n) {
        throw new ArithmeticException("always " + n);
    }

    // ---- monitors ----

    static int staticCounter;
    int instanceCounter;

    static synchronized int syncStatic(int n) {
        staticCounter += n;
        return staticCounter;
    }

    synchronized int syncInstance(int n) {
        instanceCounter += n * 2;
        return instanceCounter;
    }

    static synchronized int syncStaticThrows(int n) {
        throw new IllegalStateException("sync " + n);
    }

    static int syncBlocks(Object lock) {
        int result = 0;
        synchronized (lock) {
            result += 1;
            synchronized (RewriterCorpus.class) {
                result += 2;
            }
        }
        try {
            synchronized (lock) {
                result += 4;
                alwaysThrows(result);
            }
        } catch (ArithmeticException e) {
            // The monitor must have been released on the way out.
            result += Thread.holdsLock(lock) ? 1000 : 8;
        }
        try {
            syncStaticThrows(1);
        } catch (IllegalStateException e) {
            result += Thread.holdsLock(RewriterCorpus.class) ? 1000 : 16;
        }
        return result;
    }

    // ---- lambdas, anonymous and inner classes ----

    static String lambdas(int k) {
        IntUnaryOperator plain = x -> x * 2 + 1;
        IntUnaryOperator captured = x -> x + k;
        Function<String, Integer> length = String::length;
        List<Integer> numbers = Arrays.asList(3, 1, 4, 1, 5, 9, 2, 6);
        int streamed = numbers.stream().filter(x -> x % 2 == 1).mapToInt(Integer::intValue).map(x -> x * x).sum();
        String joined = numbers.stream().sorted().map(String::valueOf).collect(Collectors.joining(","));
        return plain.applyAsInt(k) + " " + captured.applyAsInt(10) + " " + length.apply("lambda") + " " + streamed
                + " " + joined;
    }

    static String anonymousClass() {
        List<String> words = new ArrayList<>(Arrays.asList("pear", "fig", "banana", "kiwi", "apple"));
        words.sort(new Comparator<String>() {
            @Override
            public int compare(String a, String b) {
                int byLength = Integer.compare(a.length(), b.length());
                return byLength != 0 ? byLength : a.compareTo(b);
            }
        });
        return String.join(",", words);
    }

    final int base;

    RewriterCorpus(int base) {
        this.base = base;
    }

    class Inner {
        final int offset;

        Inner(int offset) {
            this.offset = offset;
        }

        int get(int x) {
            return base * 100 + offset + x + syncInstance(x);
        }
    }

    // ---- enums and interfaces ----

    enum Op {
        ADD("+") {
            @Override
            int apply(int a, int b) {
                return a + b;
            }
        },
        SUB("-") {
            @Override
            int apply(int a, int b) {
                return a - b;
            }
        },
        MUL("*") {
            @Override
            int apply(int a, int b) {
                return a * b;
            }
        };

        final String symbol;

        Op(String symbol) {
            this.symbol = symbol;
        }

        abstract int apply(int a, int b);
    }

    static String enumCase() {
        StringBuilder sb = new StringBuilder();
        for (Op op : Op.values()) {
            sb.append(7).append(op.symbol).append(3).append('=').append(op.apply(7, 3)).append(' ');
        }
        return sb.append(Op.valueOf("MUL").apply(6, 7)).append(' ').append(Op.SUB.ordinal()).toString();
    }

    interface Shape {
        double area();

        String name();

        default String describe() {
            return name() + ":" + rounded(area());
        }

        static Shape unit() {
            return new Square(1);
        }

        private String rounded(double d) {
            return String.valueOf(Math.round(d * 100) / 100.0);
        }
    }

    static final class Square implements Shape {
        final double side;

        Square(double side) {
            this.side = side;
        }

        @Override
        public double area() {
            return side * side;
        }

        @Override
        public String name() {
            return "square";
        }

        String both() {
            return describe() + "/" + Shape.unit().describe();
        }
    }

    // ---- constructors ----

    static int a() {
        return 1;
    }

    static int b() {
        return 2;
    }

    static final class Box {
        final int value;

        Box(int value) {
            this.value = value;
        }
    }

    static class Base {
        final int value;

        Base(int value) {
            this.value = value;
        }
    }

    // Code before super()/this() runs on an uninitializedThis; branches there need stack map
    // frames that carry it.
    static final class Derived extends Base {
        final int extra;

        Derived(boolean flag) {
            super(flag ? a() : b());
            extra = 1;
        }

        Derived(boolean flag, int n) {
            super(flag ? new Box(n).value : b() + n);
            extra = 2;
        }

        Derived(int[] parts) {
            super(parts[0] * 10 + parts[1]);
            extra = parts.length;
        }

        Derived() {
            this(new int[] {1, 2});
        }

        // Integer.parseInt throws for a bad string before super() is called.
        Derived(String number) {
            super(Integer.parseInt(number));
            extra = -1;
        }
    }

    static String constructors() {
        StringBuilder sb = new StringBuilder();
        Derived[] made = {
            new Derived(true), new Derived(false), new Derived(true, 5), new Derived(false, 5), new Derived(),
            new Derived("77")
        };
        for (Derived d : made) {
            sb.append(d.value).append('/').append(d.extra).append(' ');
        }
        try {
            sb.append(new Derived("x").value);
        } catch (NumberFormatException e) {
            sb.append("NFE");
        }
        return sb.toString();
    }

    // ---- arithmetic, locals, types ----

    static long longMath(long a, long b) {
        long r = a * b + (a >>> 3) - (b << 5);
        r ^= r >> 17;
        return r % 1_000_000_007L;
    }

    static double doubleMath(double x, int n) {
        double r = 1.0;
        for (int i = 0; i < n; i++) {
            r = r * x + 0.5 / (i + 1);
        }
        return r;
    }

    static float floatMath(float f) {
        return f * 1.5f - 0.25f;
    }

    static void voidMethod(int[] out) {
        out[0] = out[0] * 2 + 1;
    }

    // Two-slot arguments between one-slot ones: slot numbers are 0, 1-2, 3-4, 5, 6.
    static double mixedArgs(int a, long b, double c, float d, Object e) {
        return a + b + c + d + (e instanceof String ? ((String) e).length() : -1);
    }

    // iinc with increments outside -128..127 needs the wide form.
    static int wideIinc(int n) {
        int i = 0;
        int steps = 0;
        while (i < n) {
            i += 1000;
            steps++;
        }
        i -= 30000;
        return i * 100 + steps;
    }

    static String typeChecks() {
        Object[] items = {1, "two", 3.0, new int[] {4}, null, 'c', Color.BLUE};
        StringBuilder sb = new StringBuilder();
        for (Object o : items) {
            if (o instanceof Integer) {
                sb.append("I").append((Integer) o + 1);
            } else if (o instanceof String) {
                sb.append("S").append(((String) o).toUpperCase());
            } else if (o instanceof Number) {
                sb.append("N").append(((Number) o).intValue());
            } else if (o instanceof int[]) {
                sb.append("A").append(((int[]) o)[0]);
            } else if (o instanceof Comparable) {
                sb.append("C").append(o);
            } else {
                sb.append("null");
            }
            sb.append(' ');
        }
        return sb.toString();
    }

    static long multiArrays() {
        int[][][] cube = new int[3][4][5];
        long[][] ragged = new long[3][];
        for (int i = 0; i < 3; i++) {
            ragged[i] = new long[i + 1];
            for (int j = 0; j < 4; j++) {
                for (int k = 0; k < 5; k++) {
                    cube[i][j][k] = i * 100 + j * 10 + k;
                }
            }
        }
        long sum = 0;
        for (int[][] plane : cube) {
            for (int[] row : plane) {
                for (int v : row) {
                    sum += v;
                }
            }
        }
        for (long[] row : ragged) {
            sum += row.length * 1000L;
        }
        return sum;
    }

    static String concat(int i, long l, double d, char c, boolean z, String s, Object o) {
        return "i=" + i + " l=" + l + " d=" + d + " c=" + c + " z=" + z + " s=" + s + " o=" + o;
    }

    static <T extends Comparable<T>> T maxOf(List<T> list, int from) {
        if (from == list.size() - 1) {
            return list.get(from);
        }
        T rest = maxOf(list, from + 1);
        return list.get(from).compareTo(rest) >= 0 ? list.get(from) : rest;
    }

    static int sumAll(int... xs) {
        int sum = 0;
        for (int x : xs) {
            sum += x;
        }
        return sum * 10 + xs.length;
    }

    static String joinAll(String separator, Object... parts) {
        return Arrays.stream(parts).map(String::valueOf).collect(Collectors.joining(separator));
    }

    static int returnFromNestedLoops(int target) {
        for (int i = 1; i < 50; i++) {
            for (int j = 1; j < 50; j++) {
                for (int k = 1; k < 50; k++) {
                    if (i * j * k == target && i < j && j < k) {
                        return i * 10000 + j * 100 + k;
                    }
                }
            }
        }
        return -1;
    }

    static int labeledDoWhile() {
        int count = 0;
        int i = 0;
        outer:
        do {
            i++;
            int j = 0;
            do {
                j++;
                if (j == i) {
                    continue outer;
                }
                if (i * j > 50) {
                    break outer;
                }
                count += j;
            } while (j < 10);
        } while (i < 20);
        return count * 1000 + i;
    }

    // The first instruction is a branch target (the loop's head), so code inserted at method
    // entry must not become part of the loop.
    static int loopFromStart(int n) {
        while (true) {
            if (n > 100) {
                return n;
            }
            n = n * 2 + 1;
        }
    }

    // A class initialiser with a loop and a switch.
    static final class Table {
        static final int[] SQUARES = new int[10];
        static int odd;

        static {
            for (int i = 0; i < SQUARES.length; i++) {
                SQUARES[i] = i * i;
                switch (i % 2) {
                    case 1: odd++; break;
                    default: break;
                }
            }
        }
    }

    public static void main(String[] args) {
        print("switchLoop", switchLoop(40));
        print("stringSwitch", stringSwitch("Aa") + "," + stringSwitch("BB") + "," + stringSwitch("alpha") + ","
                + stringSwitch("beta") + "," + stringSwitch("gamma"));
        StringBuilder colors = new StringBuilder();
        for (Color c : Color.values()) {
            colors.append(enumSwitch(c)).append(',');
        }
        print("enumSwitch", colors);

        print("nestedTry", nestedTry(0) + " " + nestedTry(1) + " " + nestedTry(2) + " " + nestedTry(3));
        print("finallyOverridesReturn", finallyOverridesReturn());
        print("finallyOverridesThrow", finallyOverridesThrow());
        print("tryWithResources", tryWithResources());
        print("rethrowAcrossMethods", rethrowAcrossMethods());
        print("checkedLoop", checkedLoop());
        print("tryFromStart", tryFromStart("123") + "," + tryFromStart("x"));
        try {
            print("alwaysThrows", alwaysThrows(5));
        } catch (ArithmeticException e) {
            print("alwaysThrows", e.getMessage());
        }

        RewriterCorpus outer = new RewriterCorpus(5);
        print("syncStatic", syncStatic(3) + syncStatic(4));
        print("syncInstance", outer.syncInstance(3) + outer.syncInstance(4));
        print("syncBlocks", syncBlocks(new Object()));

        print("lambdas", lambdas(7));
        print("anonymousClass", anonymousClass());
        RewriterCorpus.Inner inner = outer.new Inner(40);
        print("innerClass", inner.get(2));

        print("enum", enumCase());
        print("interface", new Square(1.5).both());

        print("constructors", constructors());

        print("longMath", longMath(123456789L, 987654321L));
        print("doubleMath", doubleMath(1.25, 10));
        print("floatMath", floatMath(2.5f));
        int[] cell = {20};
        voidMethod(cell);
        print("voidMethod", cell[0]);
        print("mixedArgs", mixedArgs(1, 2L, 3.5, 4.25f, "five"));
        print("manyLocals", manyLocals(3));
        print("wideIinc", wideIinc(70000));
        print("typeChecks", typeChecks());
        print("multiArrays", multiArrays());
        print("concat", concat(1, 2L, 3.5, 'x', true, "str", null));
        print("maxOf", maxOf(Arrays.asList("kiwi", "apple", "zucchini", "fig"), 0) + ","
                + maxOf(Arrays.asList(5, 17, 3), 0));
        print("varargs", sumAll() + "," + sumAll(4) + "," + sumAll(1, 2, 3) + "," + joinAll("-", 1, 'b', "c", 2.5));
        print("returnFromNestedLoops", returnFromNestedLoops(60));
        print("labeledDoWhile", labeledDoWhile());
        print("loopFromStart", loopFromStart(3));
        print("classInit", Table.SQUARES[9] + "," + Table.odd);
        print("bigMethod", Big.run(3));
        System.out.println("corpus done");
    }

    // ---- generated below (by a one-off script; the Java is the artefact) ----

    // 270 int locals, then a long and a double, so locals past slot 255 need wide
    // iload/istore/lload/dstore/iinc.
    static long manyLocals(int seed) {
        int v000 = seed * 3 + 0, v001 = v000 * 3 + 1, v002 = v001 * 3 + 2, v003 = v002 * 3 + 3;
        int v004 = v003 * 3 + 4, v005 = v004 * 3 + 5, v006 = v005 * 3 + 6, v007 = v006 * 3 + 7;
        int v008 = v007 * 3 + 8, v009 = v008 * 3 + 9, v010 = v009 * 3 + 10, v011 = v010 * 3 + 11;
        int v012 = v011 * 3 + 12, v013 = v012 * 3 + 13, v014 = v013 * 3 + 14, v015 = v014 * 3 + 15;
        int v016 = v015 * 3 + 16, v017 = v016 * 3 + 17, v018 = v017 * 3 + 18, v019 = v018 * 3 + 19;
        int v020 = v019 * 3 + 20, v021 = v020 * 3 + 21, v022 = v021 * 3 + 22, v023 = v022 * 3 + 23;
        int v024 = v023 * 3 + 24, v025 = v024 * 3 + 25, v026 = v025 * 3 + 26, v027 = v026 * 3 + 27;
        int v028 = v027 * 3 + 28, v029 = v028 * 3 + 29, v030 = v029 * 3 + 30, v031 = v030 * 3 + 31;
        int v032 = v031 * 3 + 32, v033 = v032 * 3 + 33, v034 = v033 * 3 + 34, v035 = v034 * 3 + 35;
        int v036 = v035 * 3 + 36, v037 = v036 * 3 + 37, v038 = v037 * 3 + 38, v039 = v038 * 3 + 39;
        int v040 = v039 * 3 + 40, v041 = v040 * 3 + 41, v042 = v041 * 3 + 42, v043 = v042 * 3 + 43;
        int v044 = v043 * 3 + 44, v045 = v044 * 3 + 45, v046 = v045 * 3 + 46, v047 = v046 * 3 + 47;
        int v048 = v047 * 3 + 48, v049 = v048 * 3 + 49, v050 = v049 * 3 + 50, v051 = v050 * 3 + 51;
        int v052 = v051 * 3 + 52, v053 = v052 * 3 + 53, v054 = v053 * 3 + 54, v055 = v054 * 3 + 55;
        int v056 = v055 * 3 + 56, v057 = v056 * 3 + 57, v058 = v057 * 3 + 58, v059 = v058 * 3 + 59;
        int v060 = v059 * 3 + 60, v061 = v060 * 3 + 61, v062 = v061 * 3 + 62, v063 = v062 * 3 + 63;
        int v064 = v063 * 3 + 64, v065 = v064 * 3 + 65, v066 = v065 * 3 + 66, v067 = v066 * 3 + 67;
        int v068 = v067 * 3 + 68, v069 = v068 * 3 + 69, v070 = v069 * 3 + 70, v071 = v070 * 3 + 71;
        int v072 = v071 * 3 + 72, v073 = v072 * 3 + 73, v074 = v073 * 3 + 74, v075 = v074 * 3 + 75;
        int v076 = v075 * 3 + 76, v077 = v076 * 3 + 77, v078 = v077 * 3 + 78, v079 = v078 * 3 + 79;
        int v080 = v079 * 3 + 80, v081 = v080 * 3 + 81, v082 = v081 * 3 + 82, v083 = v082 * 3 + 83;
        int v084 = v083 * 3 + 84, v085 = v084 * 3 + 85, v086 = v085 * 3 + 86, v087 = v086 * 3 + 87;
        int v088 = v087 * 3 + 88, v089 = v088 * 3 + 89, v090 = v089 * 3 + 90, v091 = v090 * 3 + 91;
        int v092 = v091 * 3 + 92, v093 = v092 * 3 + 93, v094 = v093 * 3 + 94, v095 = v094 * 3 + 95;
        int v096 = v095 * 3 + 96, v097 = v096 * 3 + 97, v098 = v097 * 3 + 98, v099 = v098 * 3 + 99;
        int v100 = v099 * 3 + 100, v101 = v100 * 3 + 101, v102 = v101 * 3 + 102, v103 = v102 * 3 + 103;
        int v104 = v103 * 3 + 104, v105 = v104 * 3 + 105, v106 = v105 * 3 + 106, v107 = v106 * 3 + 107;
        int v108 = v107 * 3 + 108, v109 = v108 * 3 + 109, v110 = v109 * 3 + 110, v111 = v110 * 3 + 111;
        int v112 = v111 * 3 + 112, v113 = v112 * 3 + 113, v114 = v113 * 3 + 114, v115 = v114 * 3 + 115;
        int v116 = v115 * 3 + 116, v117 = v116 * 3 + 117, v118 = v117 * 3 + 118, v119 = v118 * 3 + 119;
        int v120 = v119 * 3 + 120, v121 = v120 * 3 + 121, v122 = v121 * 3 + 122, v123 = v122 * 3 + 123;
        int v124 = v123 * 3 + 124, v125 = v124 * 3 + 125, v126 = v125 * 3 + 126, v127 = v126 * 3 + 127;
        int v128 = v127 * 3 + 128, v129 = v128 * 3 + 129, v130 = v129 * 3 + 130, v131 = v130 * 3 + 131;
        int v132 = v131 * 3 + 132, v133 = v132 * 3 + 133, v134 = v133 * 3 + 134, v135 = v134 * 3 + 135;
        int v136 = v135 * 3 + 136, v137 = v136 * 3 + 137, v138 = v137 * 3 + 138, v139 = v138 * 3 + 139;
        int v140 = v139 * 3 + 140, v141 = v140 * 3 + 141, v142 = v141 * 3 + 142, v143 = v142 * 3 + 143;
        int v144 = v143 * 3 + 144, v145 = v144 * 3 + 145, v146 = v145 * 3 + 146, v147 = v146 * 3 + 147;
        int v148 = v147 * 3 + 148, v149 = v148 * 3 + 149, v150 = v149 * 3 + 150, v151 = v150 * 3 + 151;
        int v152 = v151 * 3 + 152, v153 = v152 * 3 + 153, v154 = v153 * 3 + 154, v155 = v154 * 3 + 155;
        int v156 = v155 * 3 + 156, v157 = v156 * 3 + 157, v158 = v157 * 3 + 158, v159 = v158 * 3 + 159;
        int v160 = v159 * 3 + 160, v161 = v160 * 3 + 161, v162 = v161 * 3 + 162, v163 = v162 * 3 + 163;
        int v164 = v163 * 3 + 164, v165 = v164 * 3 + 165, v166 = v165 * 3 + 166, v167 = v166 * 3 + 167;
        int v168 = v167 * 3 + 168, v169 = v168 * 3 + 169, v170 = v169 * 3 + 170, v171 = v170 * 3 + 171;
        int v172 = v171 * 3 + 172, v173 = v172 * 3 + 173, v174 = v173 * 3 + 174, v175 = v174 * 3 + 175;
        int v176 = v175 * 3 + 176, v177 = v176 * 3 + 177, v178 = v177 * 3 + 178, v179 = v178 * 3 + 179;
        int v180 = v179 * 3 + 180, v181 = v180 * 3 + 181, v182 = v181 * 3 + 182, v183 = v182 * 3 + 183;
        int v184 = v183 * 3 + 184, v185 = v184 * 3 + 185, v186 = v185 * 3 + 186, v187 = v186 * 3 + 187;
        int v188 = v187 * 3 + 188, v189 = v188 * 3 + 189, v190 = v189 * 3 + 190, v191 = v190 * 3 + 191;
        int v192 = v191 * 3 + 192, v193 = v192 * 3 + 193, v194 = v193 * 3 + 194, v195 = v194 * 3 + 195;
        int v196 = v195 * 3 + 196, v197 = v196 * 3 + 197, v198 = v197 * 3 + 198, v199 = v198 * 3 + 199;
        int v200 = v199 * 3 + 200, v201 = v200 * 3 + 201, v202 = v201 * 3 + 202, v203 = v202 * 3 + 203;
        int v204 = v203 * 3 + 204, v205 = v204 * 3 + 205, v206 = v205 * 3 + 206, v207 = v206 * 3 + 207;
        int v208 = v207 * 3 + 208, v209 = v208 * 3 + 209, v210 = v209 * 3 + 210, v211 = v210 * 3 + 211;
        int v212 = v211 * 3 + 212, v213 = v212 * 3 + 213, v214 = v213 * 3 + 214, v215 = v214 * 3 + 215;
        int v216 = v215 * 3 + 216, v217 = v216 * 3 + 217, v218 = v217 * 3 + 218, v219 = v218 * 3 + 219;
        int v220 = v219 * 3 + 220, v221 = v220 * 3 + 221, v222 = v221 * 3 + 222, v223 = v222 * 3 + 223;
        int v224 = v223 * 3 + 224, v225 = v224 * 3 + 225, v226 = v225 * 3 + 226, v227 = v226 * 3 + 227;
        int v228 = v227 * 3 + 228, v229 = v228 * 3 + 229, v230 = v229 * 3 + 230, v231 = v230 * 3 + 231;
        int v232 = v231 * 3 + 232, v233 = v232 * 3 + 233, v234 = v233 * 3 + 234, v235 = v234 * 3 + 235;
        int v236 = v235 * 3 + 236, v237 = v236 * 3 + 237, v238 = v237 * 3 + 238, v239 = v238 * 3 + 239;
        int v240 = v239 * 3 + 240, v241 = v240 * 3 + 241, v242 = v241 * 3 + 242, v243 = v242 * 3 + 243;
        int v244 = v243 * 3 + 244, v245 = v244 * 3 + 245, v246 = v245 * 3 + 246, v247 = v246 * 3 + 247;
        int v248 = v247 * 3 + 248, v249 = v248 * 3 + 249, v250 = v249 * 3 + 250, v251 = v250 * 3 + 251;
        int v252 = v251 * 3 + 252, v253 = v252 * 3 + 253, v254 = v253 * 3 + 254, v255 = v254 * 3 + 255;
        int v256 = v255 * 3 + 256, v257 = v256 * 3 + 257, v258 = v257 * 3 + 258, v259 = v258 * 3 + 259;
        int v260 = v259 * 3 + 260, v261 = v260 * 3 + 261, v262 = v261 * 3 + 262, v263 = v262 * 3 + 263;
        int v264 = v263 * 3 + 264, v265 = v264 * 3 + 265, v266 = v265 * 3 + 266, v267 = v266 * 3 + 267;
        int v268 = v267 * 3 + 268, v269 = v268 * 3 + 269;
        long wideLong = v269 * 1000L + v260;
        double wideDouble = wideLong / 7.0;
        v265 += 1000;
        return (long) wideDouble ^ v000 ^ v128 ^ v255 ^ v256 ^ v265;
    }

    // A method of 40-60 KB of bytecode: the loop body is so long that its backward branch
    // spans more than 32767 bytes, so javac emits goto_w (and inverts every conditional
    // branch around a goto_w). Too big for the JIT; it always runs interpreted.
    static final class Big {
        static int run(int n) {
            int x = 1;
            int y = 0;
            for (int i = 0; i < n; i++) {
                x = x * 31 + 7787; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 152371; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26513; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 70017; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5847; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 78205; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23495; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 80670; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22268; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 139670; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 775; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 121155; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18008; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 187102; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5112; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 169029; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19575; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 189409; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20272; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 545; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4096; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 95077; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19967; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 50988; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18011; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 137585; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 599; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 149250; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7776; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21725; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23431; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 195576; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22951; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7394; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26910; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15875; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26649; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10369; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16533; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 30301; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3987; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 197998; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9538; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 69682; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27651; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 95295; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4571; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 88716; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5576; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 114852; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25800; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 106925; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23772; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 134689; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3524; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 99779; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19074; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 128322; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16255; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 63767; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13296; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 159980; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2799; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 199737; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7429; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 122793; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29883; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 184234; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27467; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 150889; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9975; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 69419; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4554; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 116764; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13913; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26256; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 111126; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9148; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 76779; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8040; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 170896; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12545; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24502; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 105; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 84982; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9791; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 169597; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25193; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 42220; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4058; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 114036; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26880; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 101331; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3799; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 163542; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25545; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 73422; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2249; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 169044; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11473; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 42749; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25215; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 133935; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4085; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 84105; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25777; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 94868; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3109; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 78240; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25192; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 88417; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11474; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 95346; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25657; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 199125; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1860; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 70762; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14576; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 30908; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11566; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 164062; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25606; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 76116; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15892; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 81048; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16306; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 153818; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17429; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 120354; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3458; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 102030; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23677; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 60485; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11089; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23302; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6341; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 177343; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12425; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 154282; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18706; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 79449; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5663; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 61080; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25290; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 108592; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2385; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 189737; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5408; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 140182; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4192; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 75012; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5531; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 175462; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18964; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 67171; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3464; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 78161; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14311; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4595; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14613; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 185641; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13951; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 115998; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3592; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 112779; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23978; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1096; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16896; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 42347; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4095; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3743; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9956; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 160875; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15261; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 178245; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12859; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4228; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10991; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 188544; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19421; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16852; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5633; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 151812; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9547; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 170230; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28320; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 121021; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15657; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 62065; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3936; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16924; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24416; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 50240; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29601; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 158417; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27794; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 168364; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10481; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 138322; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12437; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6744; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6794; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 89266; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9948; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 133841; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5689; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18636; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 92; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 124775; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9227; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21856; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5996; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 195420; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 415; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 153607; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22020; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 175848; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5387; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 40262; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1865; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27043; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25692; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 90290; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19974; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 107616; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10319; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 174839; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29796; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 171245; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27449; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18347; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28095; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 135733; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23823; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 31577; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13761; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 154614; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18190; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 45753; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17294; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4374; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6696; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 133338; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13023; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 107955; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27556; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 179992; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21843; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 114167; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12842; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 179620; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6980; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 148468; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16607; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 109313; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 800; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 155793; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29583; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 93784; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27466; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 74855; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9567; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 161673; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21688; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 83771; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7014; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 71492; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20702; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 63142; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22717; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 143018; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26290; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 596; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29317; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 191663; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20596; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 65557; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 76; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 75300; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9932; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 195034; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18722; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 135677; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18970; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 92839; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6355; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 99211; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27082; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 110649; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13616; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 162450; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5392; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 85456; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27326; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 185441; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11385; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17979; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10109; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 167374; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11723; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 182436; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14166; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 100953; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5140; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12026; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10352; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 33405; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18373; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7904; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7671; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 89219; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12458; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 159714; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17144; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 97720; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12645; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 139866; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6112; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16983; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8237; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 150835; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13806; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 103215; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11202; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 66262; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18939; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 127293; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6434; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 146812; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6408; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 34079; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6039; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 83981; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17098; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 71744; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27250; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 56792; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11617; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 189407; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6228; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 164815; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7021; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28550; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18440; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24348; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10560; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 147714; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16329; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 125108; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21020; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 138399; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23140; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7285; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5638; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 70101; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5488; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 189441; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4366; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 135910; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6997; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 30365; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10107; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4965; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7147; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 177379; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8574; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 103831; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11318; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 85805; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12222; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 170939; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5049; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 43526; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29213; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 115252; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29215; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 43607; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10513; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 93931; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19084; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 77424; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24705; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 116063; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2191; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 85470; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21373; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 41244; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9072; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 147357; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20101; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 124662; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9065; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 50416; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28545; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 52378; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11688; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 80791; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15890; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 182138; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22536; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 88833; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27259; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 121763; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26345; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18637; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26249; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 79276; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2812; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 60678; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17782; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 40982; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11172; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 164647; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29627; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 129063; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14023; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 103570; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11006; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 110015; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8867; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 172399; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29702; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 166980; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9226; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 120184; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20274; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 143483; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 631; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 75749; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5582; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 158811; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20684; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 141403; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10966; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 45491; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2615; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 189452; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15328; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 193740; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24988; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 49436; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3411; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 172831; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24884; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 143055; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6312; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4961; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20144; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 115450; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17267; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 104554; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12582; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 167864; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 657; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 187129; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13821; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 133945; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6503; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21102; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21142; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 132552; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1539; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 145157; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21047; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3585; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10787; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 69656; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5598; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27363; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1558; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 108023; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26636; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 159365; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22050; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 88561; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 436; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 197293; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20435; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 119472; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14161; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 130235; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11309; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 182603; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23121; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 128770; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16371; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 78723; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6113; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 144199; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6757; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 121067; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12281; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 89337; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7197; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 68643; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27079; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 191138; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7605; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 151509; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7916; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 125933; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29231; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 158043; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27447; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 190853; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12295; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 129892; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16176; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 181851; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15989; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 132803; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17789; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 126552; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26899; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 131740; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1442; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 39266; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25632; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 117849; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16780; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 52653; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16241; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 107116; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4882; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 149055; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2223; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 65733; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9696; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 130213; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22691; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 117789; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1820; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 129816; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22040; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 35594; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15590; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 142708; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13952; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 78447; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26549; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 163178; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10972; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 56796; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14557; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 49012; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28914; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 106304; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22881; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9718; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14107; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9620; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25166; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 59222; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23631; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 115409; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5385; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 98779; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2734; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 162631; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2203; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 124597; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1463; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 86763; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18855; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 47842; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12497; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 159376; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9426; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 80914; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29393; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 71244; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8450; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 188355; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23925; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 51890; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21970; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 48190; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17882; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 117174; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3443; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 49483; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28723; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 84192; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5952; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 93703; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27339; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17688; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28322; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 114846; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18541; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 118336; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16065; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 39812; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19056; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 153614; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14356; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 76476; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3723; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 59255; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9721; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 100027; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29263; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 46134; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3540; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 82245; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27825; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 147379; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21712; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 147705; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7749; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 145075; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2524; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 97684; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12242; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 143718; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20325; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 123437; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1557; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 121659; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10577; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 96173; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2103; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 118939; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4174; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8331; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25157; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 183746; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19892; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 159422; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5918; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 116220; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15303; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 75750; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24340; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 104587; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4739; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 68463; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11468; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 97665; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18638; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 59969; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25378; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 121836; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3602; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 183721; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27773; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 93445; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25190; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12153; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7347; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 94475; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21438; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 188689; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13269; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1161; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16229; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 95709; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7385; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 159023; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28764; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 184623; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11316; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 172346; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6598; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28322; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24017; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 35088; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13834; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 98000; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20048; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 147643; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11554; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 34775; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24838; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 164040; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27510; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 124273; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13312; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 174554; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20876; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 89120; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18746; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 107005; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1517; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 183736; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29989; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 92931; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23267; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 107726; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13896; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 119954; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21901; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 70519; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6259; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 35378; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28866; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 128747; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23102; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 58867; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13151; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 133623; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20481; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 86396; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22768; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 105152; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26292; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10621; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4260; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 50821; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8457; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 83332; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12085; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 40360; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25190; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 80726; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20930; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 60578; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25602; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 116980; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21384; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29170; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2295; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 109924; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12156; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 172706; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16665; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 156726; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29027; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18815; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11403; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 177471; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3749; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 94452; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8361; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 39522; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21381; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 135070; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7986; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 165685; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9502; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 87487; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15906; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26713; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5134; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 547; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13640; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 105506; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22406; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17203; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1281; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 60546; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23890; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 30437; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13684; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 95599; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24345; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 104372; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12473; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 55830; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20163; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 43185; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3041; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 37477; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18715; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12158; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24535; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 134664; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 707; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 61610; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23025; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 97647; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17402; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 167906; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25197; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 34283; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23560; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 142535; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19258; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5539; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11644; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 83014; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5178; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 141665; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28316; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 140838; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15415; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 70644; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29677; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 83134; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5809; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 80213; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29130; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 86710; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12392; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 66994; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7763; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 65031; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18633; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 131383; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17365; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 189168; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 245; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 107520; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6504; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 196663; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3192; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4015; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8695; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 168121; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7750; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5912; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10729; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 42372; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19184; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 123501; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25532; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 60637; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10033; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 196397; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15838; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 44139; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12083; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 39937; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17432; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 63215; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5322; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 105550; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2917; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 169328; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9423; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 164184; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28131; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 91499; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13927; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 181489; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2204; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 126844; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8352; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 56997; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13384; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 106370; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12048; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 57302; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14007; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 176345; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14246; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12743; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12510; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19833; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9305; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 176177; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27129; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8578; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22432; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 116796; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11711; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 152713; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7161; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 160794; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15857; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 97060; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29721; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 52434; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21892; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 56333; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19262; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 123340; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19946; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 47274; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27782; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 178172; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20168; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4568; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4438; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 59589; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27255; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 114580; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29359; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 180241; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5561; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 102345; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16008; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 132252; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21148; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 193785; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29700; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 190025; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16252; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 69116; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4602; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 976; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17589; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 133075; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12884; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 39369; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24700; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 107216; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18071; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 45022; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13799; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 142694; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6186; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 43473; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7203; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 100797; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 692; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 190712; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14202; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 102122; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9616; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 161550; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6366; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 63886; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27261; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 59782; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29462; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 180382; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6087; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19077; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17702; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 83280; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8939; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 98691; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16693; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 94402; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7001; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 68520; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22070; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24533; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17221; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 188427; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16336; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 150019; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12474; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 53236; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20188; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 176934; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3703; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 86507; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8760; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 108419; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28947; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 154346; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4280; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 196075; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11347; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 120103; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1920; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 193595; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28819; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12263; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28900; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 133230; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15351; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 99219; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17020; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 187023; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19011; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 146104; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23528; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22792; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6260; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 177521; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3895; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 43553; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7664; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 37532; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28032; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 175220; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18594; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21413; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22940; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 34700; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12764; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 30072; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22290; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 71329; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6545; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 150625; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19039; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 58146; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 768; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 117037; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24934; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 82217; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7529; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 119494; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2897; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 39237; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16477; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 182439; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16580; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 76586; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15912; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24369; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15176; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 155531; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13807; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 63870; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12007; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 171820; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22851; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 195756; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14491; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 170912; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28901; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24052; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9394; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 190160; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23488; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 86936; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25344; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 81279; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11561; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 94413; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24258; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 72849; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20520; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 103934; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8320; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 101760; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1552; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 151034; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28724; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24818; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2445; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22481; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20750; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12098; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25616; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 155487; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 857; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16510; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3849; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 94567; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20371; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 60475; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19121; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 172981; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7981; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 149055; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23859; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 199915; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1214; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 81622; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4866; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 36990; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21376; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 51145; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24312; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 90455; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19611; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 149712; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24902; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 49463; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28163; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 87217; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10429; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 124174; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15217; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 99717; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11708; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 180357; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16757; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 102497; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17031; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 35084; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2394; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4926; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19173; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 103858; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1444; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 124220; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15840; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 44568; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16641; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 157616; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26740; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 155193; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14466; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 160791; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14415; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20204; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26791; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1259; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22793; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 141584; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17484; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14674; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28240; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 182430; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22345; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4392; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15699; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15475; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23459; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 34464; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15871; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 106804; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13130; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 76896; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2377; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 151003; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10154; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 104076; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29292; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 117444; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11352; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 51408; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 991; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20400; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15859; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 147696; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16434; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 49446; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24767; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 61350; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1005; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 82493; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5088; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8138; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29028; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 142350; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12707; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 147420; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29943; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 110813; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5340; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29027; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6449; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 77674; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20621; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 57523; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5023; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 193789; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15016; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 162709; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 169; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 133074; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24028; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 100581; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21642; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 171362; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26157; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 97797; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19083; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 189122; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3993; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 39093; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4552; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 98732; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16285; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13361; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10623; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 123359; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25704; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 145505; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24500; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4927; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10454; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 47095; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 186; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 51014; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3961; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 63721; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27609; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 32632; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19987; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7629; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22911; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 56716; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23558; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28409; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26553; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27982; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24135; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 190630; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21329; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 82601; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11742; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 191779; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23888; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 44110; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 630; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 48749; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4232; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 108086; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17150; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7003; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12621; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 87272; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2368; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3798; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23279; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 86882; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1601; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 59621; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25689; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 36401; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17594; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 76843; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12442; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 130802; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1088; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 175623; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19936; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 165622; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3918; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 127299; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3852; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 135099; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1096; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 197251; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23350; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 42563; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13772; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 84357; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11318; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 95711; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25798; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 70974; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6369; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 121375; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16040; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 75516; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14266; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 98573; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2268; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 108237; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29197; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 122917; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3567; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 160456; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24422; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 48039; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15564; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 188380; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14706; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 167468; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14864; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11033; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20492; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 129532; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17171; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 121019; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1135; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 62392; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17841; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 119057; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17753; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 129163; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12389; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 179194; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1799; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 123812; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11051; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 100152; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3596; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 68166; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4810; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 187812; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12967; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 111619; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15561; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 99708; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10052; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 38627; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4918; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 38774; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5393; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 46732; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17726; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 37303; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21906; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 181878; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1605; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 154587; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7415; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 107425; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1874; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 160407; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18463; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 147048; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4039; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 70686; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13031; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12255; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6632; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 183153; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11585; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 56257; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1077; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 157507; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17245; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 143673; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4309; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 89286; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22925; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12132; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11358; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 87975; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27369; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 163592; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9785; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 182666; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1860; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 46096; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26273; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 129232; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10287; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 82065; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 686; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 141446; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21938; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 43218; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14262; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 73477; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14963; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 157244; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13827; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 46437; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11869; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 41141; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26889; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 94296; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21786; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24188; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11931; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 109640; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17362; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 142870; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29181; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8655; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5421; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 135836; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15605; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 112251; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23391; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 157214; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22143; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 89052; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4356; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 46335; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21938; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 139517; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26317; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 159651; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6334; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 93157; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25643; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 78111; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24719; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 93755; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14073; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 92263; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15156; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 153847; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28762; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 38625; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24647; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 141661; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13833; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 33281; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26579; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 147741; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 194841; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20287; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 100686; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25404; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 91644; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12514; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 172138; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3026; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 77269; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9724; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 148634; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1229; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 185220; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29594; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 139576; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25572; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 70038; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17759; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 187913; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2870; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 71992; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13260; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 140352; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 14353; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 64651; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26716; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 107831; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8068; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 189590; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25707; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 175001; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12090; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 143656; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21939; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 96864; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16961; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 86864; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24546; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 177235; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 779; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 187793; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12430; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10732; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27793; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15632; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15672; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 63890; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28009; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 38319; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10264; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 193071; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12944; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 196985; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29196; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 123314; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18802; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 129658; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17532; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 51407; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13110; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 196829; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7617; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 112634; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27817; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 50307; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15766; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 64313; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24585; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 65776; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17636; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 138190; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 28032; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 185846; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1991; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 165544; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13481; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 140355; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15664; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 192424; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12489; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 77486; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22118; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 77193; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 51; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 158232; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22466; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 55803; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23599; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 192007; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23900; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12063; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3980; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 168345; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9939; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 194143; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3482; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 87336; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17474; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 191689; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4969; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 86910; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25413; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 146417; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5958; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 106603; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2630; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 185436; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26528; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 94379; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29405; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 165146; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1498; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 175647; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5581; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 90194; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20280; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 97226; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15553; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 117574; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12215; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 82495; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10620; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 95092; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13927; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 69859; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4256; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29362; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5186; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 105768; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6341; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 141039; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16068; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 128931; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2028; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 25930; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10777; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1569; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7791; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 119371; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 20384; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19925; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 11656; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 167252; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4456; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 90972; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8029; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 184019; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13565; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 53642; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 9730; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 193189; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18742; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 33266; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3591; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 103816; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3260; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 30248; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 24989; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 104373; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 29632; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 36012; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 449; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 66346; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22212; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 141422; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13688; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1257; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10692; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 138476; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23374; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 53863; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5008; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 195049; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 2599; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 183425; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4863; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 93676; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21894; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 73452; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15677; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 65909; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4135; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 75622; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 21600; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 86187; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1543; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 111561; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26307; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 143888; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18326; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 40936; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12243; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 184795; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6226; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 80631; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23709; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 96721; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 1917; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 50824; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10381; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 154928; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8561; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19810; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3170; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 141159; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27642; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 103149; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13770; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 110667; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 7563; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 51295; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15176; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8441; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 8691; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 148450; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6745; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 53209; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 5160; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6367; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 12660; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 112655; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26590; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 113341; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 16138; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 180290; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 6049; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 42182; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 26076; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 94338; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 18505; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 148474; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 3208; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 45806; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 19252; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 61454; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 17734; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 99915; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 4110; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 50232; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10367; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 148728; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 13236; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 123689; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 15401; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 163896; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 23974; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 124778; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 10537; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 108614; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 22477; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 121159; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 27741; if ((x & 7) == 3) y ^= x;
                x = x * 31 + 134062; if ((x & 7) == 3) y ^= x;
            }
            return x ^ y;
        }
    }
}
