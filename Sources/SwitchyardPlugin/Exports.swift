// A plugin imports one module: the wire types it names (JSONValue, EntryID, Transition...) come with the SDK.
@_exported public import SwitchyardProtocol
