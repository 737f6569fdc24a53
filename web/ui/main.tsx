// The web UI: the fleet live, a page per node (with cordon, uncordon and drain for an
// operator), and the reports as pictures. With authentication configured it asks for a
// token first; the role `whoami` answers decides what is shown.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, gql, resetConnection } from "./api";
import { getToken, setToken, type Caller } from "./auth";
import { FleetView } from "./fleet/fleet-view";
import { NodePage } from "./node/node-page";
import { ReportsPage } from "./reports/reports-page";
import { interceptLinks, useRoute } from "./router";
import { settings } from "./settings";
import "./ui.css";

const WHOAMI = `{ whoami { subject role via } }`;

function App() {
  const [caller, setCaller] = useState<Caller | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const [asking, setAsking] = useState(settings.authRequired && !getToken());

  async function identify() {
    try {
      setCaller((await gql<{ whoami: Caller }>(WHOAMI)).whoami);
      setProblem(undefined);
      setAsking(false);
    } catch (error) {
      const code = error instanceof ApiError ? error.code : undefined;
      if (code === "UNAUTHENTICATED" || code === "FORBIDDEN") {
        setToken(undefined);
        setAsking(true);
        setProblem(code === "FORBIDDEN" ? "This token has no role here." : "The service did not accept this token.");
      } else setProblem(`The service cannot be reached: ${String(error instanceof Error ? error.message : error)}`);
    }
  }

  useEffect(() => {
    if (!asking) void identify();
  }, []);

  const signIn = (token: string) => {
    setToken(token);
    resetConnection();
    void identify();
  };
  const signOut = () => {
    setToken(undefined);
    resetConnection();
    setCaller(undefined);
    setAsking(true);
    setProblem(undefined);
  };

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header caller={caller} signOut={settings.authRequired ? signOut : undefined} />
      {asking ? (
        <TokenForm problem={problem} signIn={signIn} />
      ) : caller ? (
        <Page caller={caller} />
      ) : problem ? (
        <p class="error" role="alert">
          {problem}
        </p>
      ) : (
        <p role="status">Connecting…</p>
      )}
    </>
  );
}

function Header({ caller, signOut }: { caller: Caller | undefined; signOut?: () => void }) {
  return (
    <header class="top">
      <nav aria-label="Main">
        <a href="/" class="home">
          node-inventory
        </a>
        <a href="/ui/">Fleet</a>
        <a href="/ui/reports">Reports</a>
        <a href="/graphql">API explorer</a>
      </nav>
      {settings.simulatedClusters.length > 0 && (
        <span class="simulated" role="status">
          Simulated cluster: {settings.simulatedClusters.join(", ")} (not a real cluster)
        </span>
      )}
      {caller && (
        <span class="caller" data-role={caller.role}>
          {caller.subject} ({caller.role.toLowerCase()})
          {signOut && (
            <button type="button" class="link" onClick={signOut}>
              Sign out
            </button>
          )}
        </span>
      )}
    </header>
  );
}

function TokenForm({ problem, signIn }: { problem: string | undefined; signIn: (token: string) => void }) {
  const [token, setDraft] = useState("");
  return (
    <main id="main" class="sign-in">
      <h1>Sign in</h1>
      <form onSubmit={(event) => (event.preventDefault(), token.trim() && signIn(token.trim()))}>
        <p>This service needs a bearer token (from its tokens file, or a JWT from its OpenID Connect issuer). It is kept for this browser tab only.</p>
        {problem && (
          <p class="error" role="alert">
            {problem}
          </p>
        )}
        <label>
          Token <input name="token" type="password" autoComplete="off" value={token} onInput={(event) => setDraft((event.target as HTMLInputElement).value)} required />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}

function Page({ caller }: { caller: Caller }) {
  const route = useRoute();
  // A new page: its heading takes the focus, so keyboard and screen reader users start there.
  useEffect(() => {
    document.querySelector<HTMLElement>("main h1")?.focus();
    document.title = route.page === "node" ? `${route.name} · node-inventory` : route.page === "reports" ? "Reports · node-inventory" : "Fleet · node-inventory";
  }, [route]);
  switch (route.page) {
    case "fleet":
      return <FleetView />;
    case "node":
      return <NodePage key={`${route.cluster}/${route.name}`} cluster={route.cluster} name={route.name} caller={caller} />;
    case "reports":
      return <ReportsPage />;
    case "missing":
      return (
        <main id="main">
          <h1 tabIndex={-1}>Not found</h1>
          <p>
            Nothing lives at this address. <a href="/ui/">The fleet</a>.
          </p>
        </main>
      );
  }
}

const root = document.getElementById("app")!;
interceptLinks(document.body);
render(<App />, root);
