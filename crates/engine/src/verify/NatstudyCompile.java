// natstudy's compile server: one JVM that compiles many files with the JDK's own javac
// (javax.tools), so each compilation costs milliseconds instead of a JVM start.
// Protocol, one job a line on stdin: SOURCE-FILE TAB CLASS-OUTPUT-DIR [TAB OPTION]...
// Answer, one line on stdout: "ok" or "error", TAB, the error diagnostics on one line.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public class NatstudyCompile {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        if (javac == null) {
            out.println("nocompiler");
            return;
        }
        out.println("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t");
            if (parts.length < 2) {
                out.println("error\tbad job");
                continue;
            }
            List<String> options = new ArrayList<>(Arrays.asList(parts).subList(2, parts.length));
            options.addAll(List.of("-d", parts[1], "-proc:none", "-nowarn", "-Xlint:none",
                    "-implicit:none", "-encoding", "UTF-8", "-Xmaxerrs", "20"));
            DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
            StringWriter log = new StringWriter();
            boolean ok;
            StringBuilder message = new StringBuilder();
            try (StandardJavaFileManager files =
                    javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
                ok = javac.getTask(log, files, diagnostics, options, null,
                        files.getJavaFileObjects(parts[0])).call();
            } catch (Throwable e) {
                ok = false;
                message.append(e.toString());
            }
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                if (d.getKind() != Diagnostic.Kind.ERROR) {
                    continue;
                }
                if (message.length() > 0) {
                    message.append(" / ");
                }
                if (d.getLineNumber() > 0) {
                    message.append("line ").append(d.getLineNumber()).append(": ");
                }
                message.append(d.getMessage(Locale.ROOT));
            }
            if (!ok && message.length() == 0) {
                message.append(log.toString());
            }
            String text = message.toString().replaceAll("\\s+", " ").trim();
            if (text.length() > 2000) {
                text = text.substring(0, 2000) + "…";
            }
            out.println((ok ? "ok" : "error") + "\t" + text);
        }
    }
}
