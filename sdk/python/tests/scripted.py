"""What the agent-graph tests share: a chat model that answers with scripted
messages (no network, no keys), tools that record what ran, and helpers over
the graph's state. Imported only where LangChain is installed."""

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

#: What the tools ran, in order: (tool, its main argument).
RAN = []


class ScriptedModel(GenericFakeChatModel):
    """Answers with the scripted messages in turn; tools are the agent's business."""

    def bind_tools(self, tools, **kwargs):
        return self


def scripted(calls):
    """A model that asks for `calls`, then says it is done."""
    return ScriptedModel(messages=iter([AIMessage(content="", tool_calls=calls), AIMessage(content="done")]))


@tool
def bash(command: str) -> str:
    """Runs a shell command."""
    RAN.append(("bash", command))
    return f"ran: {command}"


@tool
def read_file(path: str) -> str:
    """Reads a file."""
    RAN.append(("read_file", path))
    return "contents"


@tool
def write_file(path: str, content: str) -> str:
    """Writes a file."""
    RAN.append(("write_file", path))
    return "written"


@tool
def web_search(query: str) -> str:
    """Searches the web."""
    RAN.append(("web_search", query))
    return "results"


def call(id, name, **args):
    return {"id": id, "name": name, "args": args, "type": "tool_call"}


def tool_messages(state):
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


def answer(*decisions):
    """A resume value as LangChain documents it: HumanInTheLoopMiddleware's decisions."""
    return {"decisions": list(decisions)}


def run_config(thread, user="alice"):
    """A run's config as the LangGraph server gives it: the thread, and the
    authenticated user (`langgraph_auth_user`, a key no client may set)."""
    configurable = {"thread_id": thread}
    if user is not None:
        configurable["langgraph_auth_user"] = {"identity": user}
    return {"configurable": configurable}
