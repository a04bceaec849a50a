"use strict";(self.rspackChunkjupyter_guard=self.rspackChunkjupyter_guard||[]).push([[700],{646(e,r,t){var n=t(601),a=t.n(n),o=t(314),i=(t.n(o))()(a());i.push([e.id,`.jp-GuardStatus {
  cursor: pointer;
  padding: 0 4px;
}

.jp-GuardStatus.jp-mod-warn {
  color: var(--jp-warn-color0);
}

.jp-GuardStatus.jp-mod-paused {
  background: var(--jp-error-color1);
  color: white;
  font-weight: bold;
}

.jp-GuardPanel {
  padding: 8px;
  overflow: auto;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size1);
}

.jp-GuardPanel h2 {
  font-size: var(--jp-ui-font-size2);
  margin: 0 0 8px;
}

.jp-GuardPanel h3 {
  font-size: var(--jp-ui-font-size1);
  margin: 12px 0 4px;
}

.jp-GuardPanel-kernels {
  list-style: none;
  margin: 0;
  padding: 0;
}

.jp-GuardPanel-kernels li {
  padding: 4px;
  border-bottom: 1px solid var(--jp-border-color2);
  cursor: pointer;
}

.jp-GuardPanel-kernels li > div {
  margin: 2px 0;
}

.jp-GuardPanel-kernels li.jp-mod-selected {
  background: var(--jp-layout-color2);
}

.jp-GuardPanel-id {
  font-family: var(--jp-code-font-family);
  margin-right: 8px;
}

.jp-GuardPanel-notebook {
  margin-right: 8px;
}

.jp-GuardPanel-state {
  font-weight: bold;
}

.jp-GuardPanel-kernels li.jp-mod-paused .jp-GuardPanel-state {
  color: var(--jp-error-color1);
}

.jp-GuardPanel-source {
  color: var(--jp-ui-font-color2);
}

.jp-GuardPanel .jp-GuardPanel-button {
  margin: 2px 4px 0 0;
  min-width: 0;
  padding: 0 8px;
  height: 24px;
  line-height: 24px;
  font-size: var(--jp-ui-font-size1);
}

.jp-GuardPanel-cells {
  border-collapse: collapse;
  width: 100%;
  table-layout: fixed;
}

.jp-GuardPanel-cells td {
  padding: 2px 4px;
  border-bottom: 1px solid var(--jp-border-color2);
  white-space: nowrap;
  overflow: hidden;
  text-overflow: ellipsis;
}

.jp-GuardPanel-cells td.jp-GuardPanel-num {
  width: 4.8em;
  text-align: right;
}

.jp-GuardPanel-code {
  font-family: var(--jp-code-font-family);
}

.jp-GuardPanel-error {
  color: var(--jp-error-color1);
}
`,""]),t.d(r,{},{A:i})},314(e){e.exports=function(e){var r=[];return r.toString=function(){return this.map(function(r){var t="",n=void 0!==r[5];return r[4]&&(t+="@supports (".concat(r[4],") {")),r[2]&&(t+="@media ".concat(r[2]," {")),n&&(t+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),t+=e(r),n&&(t+="}"),r[2]&&(t+="}"),r[4]&&(t+="}"),t}).join("")},r.i=function(e,t,n,a,o){"string"==typeof e&&(e=[[null,e,void 0]]);var i={};if(n)for(var p=0;p<this.length;p++){var l=this[p][0];null!=l&&(i[l]=!0)}for(var s=0;s<e.length;s++){var u=[].concat(e[s]);n&&i[u[0]]||(void 0!==o&&(void 0===u[5]||(u[1]="@layer".concat(u[5].length>0?" ".concat(u[5]):""," {").concat(u[1],"}")),u[5]=o),t&&(u[2]&&(u[1]="@media ".concat(u[2]," {").concat(u[1],"}")),u[2]=t),a&&(u[4]?(u[1]="@supports (".concat(u[4],") {").concat(u[1],"}"),u[4]=a):u[4]="".concat(a)),r.push(u))}},r}},601(e){e.exports=function(e){return e[1]}},72(e){var r=[];function t(e){for(var t=-1,n=0;n<r.length;n++)if(r[n].identifier===e){t=n;break}return t}function n(e,n){for(var a={},o=[],i=0;i<e.length;i++){var p=e[i],l=n.base?p[0]+n.base:p[0],s=a[l]||0,u="".concat(l," ").concat(s);a[l]=s+1;var c=t(u),d={css:p[1],media:p[2],sourceMap:p[3],supports:p[4],layer:p[5]};if(-1!==c)r[c].references++,r[c].updater(d);else{var f=function(e,r){var t=r.domAPI(r);return t.update(e),function(r){r?(r.css!==e.css||r.media!==e.media||r.sourceMap!==e.sourceMap||r.supports!==e.supports||r.layer!==e.layer)&&t.update(e=r):t.remove()}}(d,n);n.byIndex=i,r.splice(i,0,{identifier:u,updater:f,references:1})}o.push(u)}return o}e.exports=function(e,a){var o=n(e=e||[],a=a||{});return function(e){e=e||[];for(var i=0;i<o.length;i++){var p=t(o[i]);r[p].references--}for(var l=n(e,a),s=0;s<o.length;s++){var u=t(o[s]);0===r[u].references&&(r[u].updater(),r.splice(u,1))}o=l}}},659(e){var r={};e.exports=function(e,t){var n=function(e){if(void 0===r[e]){var t=document.querySelector(e);if(window.HTMLIFrameElement&&t instanceof window.HTMLIFrameElement)try{t=t.contentDocument.head}catch(e){t=null}r[e]=t}return r[e]}(e);if(!n)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");n.appendChild(t)}},540(e){e.exports=function(e){var r=document.createElement("style");return e.setAttributes(r,e.attributes),e.insert(r,e.options),r}},56(e,r,t){e.exports=function(e){var r=t.nc;r&&e.setAttribute("nonce",r)}},206(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=e.insertStyleElement(e);return{update:function(t){var n,a,o;n="",t.supports&&(n+="@supports (".concat(t.supports,") {")),t.media&&(n+="@media ".concat(t.media," {")),(a=void 0!==t.layer)&&(n+="@layer".concat(t.layer.length>0?" ".concat(t.layer):""," {")),n+=t.css,a&&(n+="}"),t.media&&(n+="}"),t.supports&&(n+="}"),(o=t.sourceMap)&&"u">typeof btoa&&(n+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(o))))," */")),e.styleTagTransform(n,r,e.options)},remove:function(){var e;null===(e=r).parentNode||e.parentNode.removeChild(e)}}}},113(e){e.exports=function(e,r){if(r.styleSheet)r.styleSheet.cssText=e;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(e))}}},959(e,r,t){var n=t(72),a=t.n(n),o=t(206),i=t.n(o),p=t(659),l=t.n(p),s=t(56),u=t.n(s),c=t(540),d=t.n(c),f=t(113),v=t.n(f),m=t(646),h={};h.styleTagTransform=v(),h.setAttributes=u(),h.insert=l().bind(null,"head"),h.domAPI=i(),h.insertStyleElement=d(),a()(m.A,h),m.A&&m.A.locals&&m.A.locals}}]);