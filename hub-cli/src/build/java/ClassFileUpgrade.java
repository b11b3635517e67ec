import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Build step of hub-cli (run by the java launcher from this source, with ASM on the class path):
 * copies the classes of a library jar into the module's classes, rewritten from class-file versions
 * before 50 (Java 6) to version 52 with stack map frames computed. picocli is compiled for Java 5,
 * and the JVM keeps such "old" classes out of a class-data archive or AOT cache: without this, a
 * hub start read and verified the 172 of picocli's 227 classes it uses from the jar every time
 * (about 100 ms of CPU). Only the version and the frames change; the code stays as picocli built
 * it. A class with JSR/RET (not allowed from version 51) stops the build, rather than being copied
 * unconverted. What an earlier run wrote under the prefix is removed first, so a class a newer
 * picocli dropped does not linger in the jar.
 *
 * <p>usage: {@code java -cp asm.jar ClassFileUpgrade LIBRARY.jar OUTPUT_DIR PACKAGE_PREFIX}
 */
public final class ClassFileUpgrade {
    private ClassFileUpgrade() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: ClassFileUpgrade LIBRARY.jar OUTPUT_DIR PACKAGE_PREFIX");
        }
        Path library = Path.of(args[0]);
        Path out = Path.of(args[1]);
        String prefix = args[2];
        int written = 0;
        Path earlier = out.resolve(prefix);
        if (Files.isDirectory(earlier)) {
            try (var walk = Files.walk(earlier)) {
                for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        try (JarFile jar = new JarFile(library.toFile());
             URLClassLoader types = new URLClassLoader(new URL[]{library.toUri().toURL()},
                     ClassLoader.getPlatformClassLoader())) {
            for (Enumeration<JarEntry> entries = jar.entries(); entries.hasMoreElements(); ) {
                JarEntry e = entries.nextElement();
                if (e.isDirectory() || !e.getName().startsWith(prefix) || !e.getName().endsWith(".class")) {
                    continue;
                }
                byte[] bytes;
                try (InputStream in = jar.getInputStream(e)) {
                    bytes = in.readAllBytes();
                }
                int major = (bytes[6] & 0xff) << 8 | bytes[7] & 0xff;
                if (major < Opcodes.V1_6) {
                    bytes = upgrade(bytes, types);
                }
                Path target = out.resolve(e.getName());
                Files.createDirectories(target.getParent());
                Files.write(target, bytes);
                written++;
            }
        }
        if (written == 0) {
            throw new IllegalStateException("no class under " + prefix + " in " + library);
        }
    } // silent when it worked: the launcher's first-run build and `./mvnw -q` print nothing either

    private static byte[] upgrade(byte[] bytes, ClassLoader types) {
        ClassReader reader = new ClassReader(bytes);
        ClassWriter writer = new ClassWriter(ClassWriter.COMPUTE_FRAMES) {
            @Override
            protected ClassLoader getClassLoader() {
                return types; // the library's own types, for the frames' common super classes
            }
        };
        String name = reader.getClassName();
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public void visit(int version, int access, String n, String signature, String superName,
                              String[] interfaces) {
                super.visit(Opcodes.V1_8, access, n, signature, superName, interfaces);
            }

            @Override
            public MethodVisitor visitMethod(int access, String method, String descriptor, String signature,
                                             String[] exceptions) {
                return new MethodVisitor(Opcodes.ASM9, super.visitMethod(access, method, descriptor, signature,
                        exceptions)) {
                    @Override
                    public void visitJumpInsn(int opcode, Label label) {
                        if (opcode == Opcodes.JSR) {
                            throw new IllegalStateException("JSR in " + name + "." + method + ": not convertible");
                        }
                        super.visitJumpInsn(opcode, label);
                    }
                };
            }
        }, ClassReader.SKIP_FRAMES);
        return writer.toByteArray();
    }
}
