// Agent test program: defines Unloadable in a throw-away class loader, makes 100 instances of
// it, drops the loader and everything it made, and collects garbage until the class is
// unloaded (its Class object is freed); then starts one more thread and returns.

import java.io.InputStream;
import java.lang.ref.WeakReference;

public class UnloadClasses {
    static final class OneClassLoader extends ClassLoader {
        OneClassLoader() {
            super(UnloadClasses.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("Unloadable")) {
                return super.loadClass(name, resolve);
            }
            try (InputStream in = getParent().getResourceAsStream("Unloadable.class")) {
                byte[] bytes = in.readAllBytes();
                return defineClass(name, bytes, 0, bytes.length);
            } catch (java.io.IOException e) {
                throw new ClassNotFoundException(name, e);
            }
        }
    }

    static Object sink;

    static WeakReference<Class<?>> useAndDrop() throws Exception {
        Class<?> cls = new OneClassLoader().loadClass("Unloadable");
        for (int i = 0; i < 100; i++) {
            sink = cls.getDeclaredConstructor().newInstance();
        }
        sink = null;
        return new WeakReference<>(cls);
    }

    public static void main(String[] args) throws Exception {
        WeakReference<Class<?>> ref = useAndDrop();
        for (int i = 0; i < 50 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(20);
        }
        System.out.println(ref.get() == null ? "unloaded" : "still loaded");
        Thread t = new Thread(() -> { }, "after-unload");
        t.start();
        t.join();
    }
}
