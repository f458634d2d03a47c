# The notes plugin (started by notes.sh): a Switchyard protocol v1 coordinator plugin in jq, written from
# Protocol/README.md alone.
#
# One jq process serves the whole connection: it reads stdin as raw lines (`jq -n -R`), keeps the plugin's state
# from one message to the next (`foreach`), writes each answer as one line and flushes it (`--unbuffered`), and ends
# at stdin's end of file (§4) or on `exit` (§3.6, through `halt_error`).

# §5: the route table. Two stack types; `settings` is a local child coordinator that `notes` pushes.
def types: {
  notes: {type: "notes", kind: "stack", initialRoute: "list", routes: [
    {name: "list", transition: "root"},
    {name: "note", transition: "push", deepLink: "note/:id", params: [{name: "id", type: "integer"}]},
    {name: "compose", transition: "modal", deepLink: "new",
     params: [{name: "title", type: "string", required: false}]},
    {name: "settings", transition: "push", deepLink: "settings", target: {type: "settings"}}
  ]},
  settings: {type: "settings", kind: "stack", initialRoute: "general", routes: [
    {name: "general", transition: "root"},
    {name: "about", transition: "fullScreen", deepLink: "about"}
  ]}
};

def notes: {"1": "Read the spec", "2": "Write a plugin from it", "3": "Run check-plugin"};

def declaration($name): if ($name | type) == "string" then types[$name] else null end;

# §2: responses, and error responses with code, message and data (§7).
def ok($id; $result): {send: {jsonrpc: "2.0", id: $id, result: $result}};
def failure($id; $code; $message; $data): {send: {jsonrpc: "2.0", id: $id, error: {code: $code, message: $message, data: $data}}};
# Logs go through the log notification (§8), never as bare text on stdout (§1).
def log($message): {send: {jsonrpc: "2.0", method: "log", params: {level: "info", message: $message}}};
def respond($state; $out): {state: $state, out: $out};

# §5: a declared param's JSON type.
def fits($kind):
  if $kind == "string" then type == "string"
  elif $kind == "integer" then type == "number" and . == floor
  elif $kind == "number" then type == "number"
  elif $kind == "boolean" then type == "boolean"
  elif $kind == "object" then type == "object"
  elif $kind == "array" then type == "array"
  else true end;

# §7: the first param that is missing or of the wrong type, as {field, message}; null when they fit.
def param_problem($route; $params):
  [ ($route.params // [])[] as $declared
    | (if ($params | type) == "object" then $params[$declared.name] else null end) as $value
    | if $value == null then
        (if $declared.required != false then {field: $declared.name, message: "route '\($route.name)' needs param '\($declared.name)'"} else empty end)
      elif ($value | fits($declared.type)) then empty
      else {field: $declared.name, message: "route '\($route.name)': param '\($declared.name)' must be \($declared.type)"}
      end ] | .[0];

# What a route shows: a screen, a coordinator (routes with a target, §8), or a guard's refusal.
def content($route; $params):
  if $route == "list" then {screen: {name: "NoteList", props: {count: (notes | length)}}}
  elif $route == "note" then
    (notes[$params.id | tostring]) as $text
    | if $text == null then {reject: "there is no note \($params.id)"} else {screen: {name: "Note", props: {id: $params.id, text: $text}}} end
  elif $route == "compose" then {screen: {name: "Compose", props: {title: ($params.title // "")}}}
  elif $route == "settings" then {coordinator: {type: "settings"}}
  elif $route == "general" then {screen: {name: "Settings"}}
  elif $route == "about" then {screen: {name: "About", props: {plugin: "notes-shell"}}}
  else {reject: "no such route"} end;

# State the host keeps for a notes instance and hands back on restore (§8, §16): how many notes it opened.
def instance_state($instance): if $instance.type == "notes" then {state: {opened: $instance.opened}} else {} end;

def initialize($state; $id; $p):
  if ([$p.protocolVersions[]?] | any(. == 1)) then
    respond($state; [ok($id; {protocolVersion: 1, plugin: {name: "notes-shell", version: "1.0.0"}, coordinators: [types[]]})])
  else
    respond($state; [failure($id; -32002; "this plugin speaks protocol version 1 only"; {supported: [1]})])
  end;

def create($state; $id; $p):
  declaration($p.type) as $declaration
  | ($p.instance | tostring) as $key
  | if $declaration == null then respond($state; [failure($id; -32602; "no coordinator type '\($p.type)'"; {field: "type"})])
    elif $p.reason == "restore" then
      respond($state | .instances[$key] = {type: $p.type, opened: ($p.state.opened // 0)}; [ok($id; {})])
    else
      {type: $p.type, opened: 0} as $instance
      | content($declaration.initialRoute; {}) as $shown
      | respond($state | .instances[$key] = $instance;
          [ok($id; {root: {route: $declaration.initialRoute, content: $shown}} + instance_state($instance))])
    end;

def route($state; $id; $p):
  ($p.instance | tostring) as $key
  | $state.instances[$key] as $instance
  | if $instance == null then respond($state; [failure($id; -32015; "no instance \($p.instance)"; {instance: $p.instance})])
    else
      ([declaration($instance.type).routes[] | select(.name == $p.route)] | .[0]) as $route
      | if $route == null then respond($state; [failure($id; -32010; "\($instance.type) has no route '\($p.route)'"; {route: $p.route})])
        else
          param_problem($route; $p.params) as $problem
          | if $problem != null then respond($state; [failure($id; -32602; $problem.message; {field: $problem.field})])
            else
              content($p.route; $p.params // {}) as $shown
              | if $shown.reject then respond($state; [failure($id; -32013; $shown.reject; {route: $p.route})])
                else
                  ($instance | .opened += (if $p.route == "note" then 1 else 0 end)) as $updated
                  | respond($state | .instances[$key] = $updated; [ok($id; {content: $shown} + instance_state($updated))])
                end
            end
        end
    end;

def request($state):
  .id as $id | .method as $method | (.params // {}) as $p
  | if $method == "initialize" then initialize($state; $id; $p)
    elif $method == "$/ping" then respond($state; [ok($id; {})])
    elif $method == "shutdown" then respond($state | .shutdown = true; [ok($id; {})])
    elif $method == "coordinator/create" then create($state; $id; $p)
    elif $method == "coordinator/route" then route($state; $id; $p)
    elif $method == "coordinator/destroy" then respond($state | del(.instances[$p.instance | tostring]); [ok($id; {})])
    else respond($state; [failure($id; -32601; "unknown method '\($method)'"; {method: $method})])
    end;

# Notifications are never answered (§2); unknown ones are ignored.
def notification($state):
  if .method == "exit" then respond($state; [{exit: (if $state.shutdown then 0 else 1 end)}])
  elif .method == "coordinator/dismissed" then respond($state; [log("\(.params.route) of \(.params.instance) dismissed (\(.params.reason))")])
  else respond($state; [])
  end;

def handle($state):
  if type != "object" or .jsonrpc != "2.0" or ((.method? // "") | type) != "string" then
    # §2: valid JSON that is not a valid message gets -32600 when its id can be read.
    if type == "object" and ((.id | type) == "number" or (.id | type) == "string") then
      respond($state; [failure(.id; -32600; "not a JSON-RPC 2.0 message"; {field: "jsonrpc"})])
    else respond($state; [log("ignored a line that is not a JSON-RPC 2.0 message")]) end
  elif has("method") | not then respond($state; [])
  elif has("id") then request($state)
  else notification($state)
  end;

# The connection: each line of stdin in turn, with the state the previous one left. An empty line is ignored (§1);
# a line that is not JSON is logged and dropped (it has no id to answer).
foreach inputs as $line ({state: {instances: {}}, out: []};
  .state as $state
  | if ($line | test("^\\s*$")) then .out = []
    else
      ([$line | fromjson?]) as $parsed
      | if $parsed == [] then .out = [log("ignored a line that is not valid JSON")]
        else $parsed[0] | handle($state) end
    end;
  .out[] | if has("exit") then (.exit as $code | "" | halt_error($code)) else .send | tojson end)
